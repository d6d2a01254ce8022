"""The plain `openai` SDK in a hand-written tool loop, through the proxy."""

from __future__ import annotations

import openai
import pytest

from tests.proxy.proxy_helpers import (
    AGENT_KEY,
    UPSTREAM_KEY,
    running_proxy,
    session_of,
    text_reply,
    tool_loop,
    tool_reply,
)
from tests.support.fixtures import chat_server  # noqa: F401


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_call_and_its_result_matched_by_id(chat_server, tmp_path, stream):
    chat_server.script(tool_reply("call_a1", "a.txt", streamed=stream), text_reply("It says alpha.", streamed=stream))
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        ran: list[str] = []
        text, _ = await tool_loop(client, "what is in a.txt?", stream=stream, ran=ran)
        await client.close()
    assert text == "It says alpha."
    assert ran == ["a.txt"]
    session, state = session_of(proxy)
    call = state.calls["call_a1"]
    assert call.name == "read_file"
    assert call.raw == '{"path": "a.txt"}'
    assert call.stage == "done"
    assert call.result_text == "alpha contents"
    assert state.run_state == "finished"
    # the upstream got the upstream's key, never the agent's; the session holds neither
    assert [r.headers["authorization"] for r in chat_server.requests] == [f"Bearer {UPSTREAM_KEY}"] * 2
    text = session.path.read_text()
    assert UPSTREAM_KEY not in text and AGENT_KEY not in text
    second = chat_server.requests[1].json["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_a1", "content": "alpha contents"}
