"""The OpenAI Agents SDK on its default wire format, Responses, through the proxy: an
allowed call runs, a denied one never does and the agent still finishes, an edited
one runs with the edited arguments; each conversation is recorded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pydantic
import pytest

from tests.proxy.helpers import AGENT_KEY, FILES, running_proxy, session_of
from tests.proxy.test_proxy_agents_sdk import agents_sdk
from tests.support.chat_server import ReceivedRequest, Reply
from tests.support.upstreams.responses import (
    ResponsesServer,
    function_call,
    message,
    responses_stream,
    responses_whole,
)
from workbench.pauses import Resume


@pytest.fixture(autouse=True)
def _sdk_imported() -> None:
    """The SDK is imported before a test starts its proxy, not while its loop serves."""
    agents_sdk()


def model_reply(streamed: bool):
    """Asks to read a.txt, then answers with the output it got back."""

    def reply(request: ReceivedRequest) -> Reply:
        items = request.json["input"]
        outputs = [
            i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        if outputs:
            output = [message(f"got: {outputs[-1]['output']}")]
        else:
            output = [function_call("call_r1", "read_file", json.dumps({"path": "a.txt"}))]
        return responses_stream(output) if streamed else responses_whole(output)

    return reply


def make_agent(proxy: Any, ran: list[str]) -> tuple[Any, openai.AsyncOpenAI]:
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

    model = agents.OpenAIResponsesModel(model="test-model", openai_client=client)
    agent = agents.Agent(
        name="reader", instructions="You read files.", tools=[read_file], model=model
    )
    return agent, client


async def run(agent: Any, prompt: str, streamed: bool) -> str:
    agents = agents_sdk()
    if not streamed:
        return (await agents.Runner.run(agent, prompt)).final_output
    result = agents.Runner.run_streamed(agent, prompt)
    async for _ in result.stream_events():
        pass
    return result.final_output


@pytest.fixture
def responses_server():
    with ResponsesServer() as server:
        yield server


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_allowed_call_runs_and_the_agent_finishes(responses_server, tmp_path, streamed):
    responses_server.default = model_reply(streamed)
    ran: list[str] = []
    async with running_proxy(responses_server, tmp_path) as proxy:
        agent, client = make_agent(proxy, ran)
        output = await asyncio.wait_for(run(agent, "what is in a.txt?", streamed), 30)
        await client.close()
    assert ran == ["a.txt"] and output == "got: alpha contents"
    assert len(proxy.conversations) == 1  # the second request continued the first
    _, state = session_of(proxy)
    call = state.calls["call_r1"]
    assert call.name == "read_file" and call.status == "done"
    assert call.result_text == "alpha contents"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_denied_call_never_runs_and_the_agent_still_finishes(
    responses_server, tmp_path, streamed
):
    responses_server.default = model_reply(streamed)
    ran: list[str] = []
    async with running_proxy(responses_server, tmp_path, deny=["read_file"]) as proxy:
        agent, client = make_agent(proxy, ran)
        output = await asyncio.wait_for(run(agent, "what is in a.txt?", streamed), 30)
        await client.close()
    assert ran == []
    # the proxy answered the call upstream: the model's answer to the denial is the output
    assert output == "got: Permission denied by rule read_file (--deny)"
    assert len(responses_server.requests) == 2
    _, state = session_of(proxy)
    assert state.calls["call_r1"].status == "denied"


class Weather(pydantic.BaseModel):
    city: str
    known: bool


def structured_reply(streamed: bool):
    """Asks to read a.txt, then answers with the structure, whatever the output was."""

    def reply(request: ReceivedRequest) -> Reply:
        items = request.json["input"]
        if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items):
            output = [message(json.dumps({"city": "Paris", "known": False}))]
        else:
            output = [function_call("call_s1", "read_file", json.dumps({"path": "a.txt"}))]
        return responses_stream(output) if streamed else responses_whole(output)

    return reply


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_agent_with_an_output_type_finishes_after_a_denial(
    responses_server, tmp_path, streamed
):
    responses_server.default = structured_reply(streamed)
    ran: list[str] = []
    async with running_proxy(responses_server, tmp_path, deny=["read_file"]) as proxy:
        agent, client = make_agent(proxy, ran)
        agent = agent.clone(output_type=Weather)
        output = await asyncio.wait_for(run(agent, "what is the weather?", streamed), 30)
        await client.close()
    assert ran == []
    assert output == Weather(city="Paris", known=False)
    follow_up = responses_server.requests[1].json
    assert follow_up["text"]["format"]["type"] == "json_schema"  # the agent's own request
    assert follow_up["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_s1",
        "output": "Permission denied by rule read_file (--deny)",
    }


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_edited_call_runs_with_the_edited_arguments(responses_server, tmp_path, streamed):
    responses_server.default = model_reply(streamed)
    ran: list[str] = []
    async with running_proxy(responses_server, tmp_path, breakpoints=["read_file"]) as proxy:

        def watch(conv: Any) -> None:
            stepper = conv.runtime.stepper

            def on_event(event: Any, _signal: Any = None) -> None:
                if event.type == "step_paused":
                    action = Resume.edit({"path": "b.txt"})
                    pause_id = stepper.paused.pause_id
                    asyncio.get_running_loop().call_soon(stepper.resume, pause_id, action)

            conv.agent.subscribe(on_event)

        proxy.on_conversation.append(watch)
        agent, client = make_agent(proxy, ran)
        output = await asyncio.wait_for(run(agent, "what is in a.txt?", streamed), 30)
        await client.close()
    assert ran == ["b.txt"] and output == "got: beta contents"
    _, state = session_of(proxy)
    call = state.calls["call_r1"]
    assert call.edited_args == {"path": "b.txt"} and call.result_text == "beta contents"
