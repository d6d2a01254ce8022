"""A real agent nobody here wrote: the OpenAI Agents SDK with a function tool, through the proxy."""

from __future__ import annotations

import functools
from typing import Any

import openai
import pytest

from tests.proxy.helpers import (
    AGENT_KEY,
    FILES,
    running_proxy,
    session_of,
    text_reply,
    tool_reply,
)


@functools.cache
def agents_sdk() -> Any:
    """The SDK, imported by the tests that use it: not at collection, where each worker
    would pay its seconds of import."""
    sdk = pytest.importorskip("agents")
    sdk.set_tracing_disabled(True)
    return sdk


@pytest.fixture(autouse=True)
def _sdk_imported() -> None:
    """The SDK is imported before a test starts its proxy, not while its loop serves."""
    agents_sdk()


def make_agent(proxy, ran: list[str]):
    agents = agents_sdk()
    client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)

    @agents.function_tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: the file to read.
        """
        ran.append(path)
        return FILES[path]

    model = agents.OpenAIChatCompletionsModel(model="test-model", openai_client=client)
    return agents.Agent(
        name="reader", instructions="You read files.", tools=[read_file], model=model
    ), client


async def run(agent, prompt: str, streamed: bool) -> str:
    agents = agents_sdk()
    if not streamed:
        return (await agents.Runner.run(agent, prompt)).final_output
    result = agents.Runner.run_streamed(agent, prompt)
    async for _ in result.stream_events():
        pass
    return result.final_output


@pytest.mark.parametrize("streamed", [False, True])
async def test_agents_sdk_call_and_result_matched_by_id(chat_server, tmp_path, streamed):
    chat_server.script(
        tool_reply("call_sdk1", "a.txt", streamed=streamed),
        text_reply("alpha it is", streamed=streamed),
    )
    ran: list[str] = []
    async with running_proxy(chat_server, tmp_path) as proxy:
        agent, client = make_agent(proxy, ran)
        output = await run(agent, "what is in a.txt?", streamed)
        await client.close()
    assert output == "alpha it is"
    assert ran == ["a.txt"]
    _session, state = session_of(proxy)
    assert len(proxy.conversations) == 1
    call = state.calls["call_sdk1"]
    assert call.name == "read_file" and call.raw == '{"path": "a.txt"}'
    assert call.status == "done" and call.result_text == "alpha contents"
    # the SDK's own request carried the result under the same id
    sent = chat_server.requests[1].json["messages"]
    assert any(
        m.get("tool_call_id") == "call_sdk1" and m["content"] == "alpha contents" for m in sent
    )


@pytest.mark.parametrize("streamed", [False, True])
async def test_agents_sdk_goes_on_after_a_denial_in_the_same_turn(chat_server, tmp_path, streamed):
    chat_server.script(
        tool_reply("call_sdk2", "b.txt", streamed=streamed),
        text_reply("I may not read b.txt.", streamed=streamed),
    )
    ran: list[str] = []
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        agent, client = make_agent(proxy, ran)
        output = await run(agent, "what is in b.txt?", streamed)
        await client.close()
    assert ran == []
    assert output == "I may not read b.txt."
    # the model saw its call answered with the denial, in the same turn
    follow_up = chat_server.requests[1].json["messages"]
    assert follow_up[-2]["tool_calls"][0]["id"] == "call_sdk2"
    assert follow_up[-1] == {
        "role": "tool",
        "tool_call_id": "call_sdk2",
        "content": "Permission denied by rule read_file (--deny)",
    }
    _session, state = session_of(proxy)
    call = state.calls["call_sdk2"]
    assert call.status == "denied" and call.raw == '{"path": "b.txt"}'
    assert call.result_text == "Permission denied by rule read_file (--deny)"
