"""The plain `openai` SDK in a hand-written tool loop, through the proxy."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.proxy.helpers import (
    AGENT_KEY,
    UPSTREAM_KEY,
    running_proxy,
    session_of,
    text_reply,
    tool_loop,
    tool_reply,
)


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_call_and_its_result_matched_by_id(chat_server, tmp_path, stream):
    chat_server.script(
        tool_reply("call_a1", "a.txt", streamed=stream),
        text_reply("It says alpha.", streamed=stream),
    )
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
    assert call.status == "done"
    assert call.result_text == "alpha contents"
    assert state.run_state == "finished"
    # the upstream got the upstream's key, never the agent's; the session holds neither
    assert [r.headers["authorization"] for r in chat_server.requests] == [
        f"Bearer {UPSTREAM_KEY}"
    ] * 2
    text = session.path.read_text()
    assert UPSTREAM_KEY not in text and AGENT_KEY not in text
    second = chat_server.requests[1].json["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_a1", "content": "alpha contents"}


@pytest.mark.parametrize("stream", [True, False])
async def test_a_denied_call_never_reaches_the_agent_and_the_model_is_told(
    chat_server, tmp_path, stream
):
    chat_server.script(
        tool_reply("call_b1", "b.txt", streamed=stream, text="Let me look."),
        text_reply("I may not read it.", streamed=stream),
        text_reply("Fine, I will not.", streamed=stream),
    )
    denied_call = {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "call_b1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "b.txt"}'},
            }
        ],
    }
    denial = {
        "role": "tool",
        "tool_call_id": "call_b1",
        "content": "Permission denied by rule read_file (--deny)",
    }
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        ran: list[str] = []
        text, messages = await tool_loop(client, "what is in b.txt?", stream=stream, ran=ran)
        assert ran == []
        # the same turn: the proxy answered the call upstream, the agent got the answer
        assert text == "Let me look.\n\nI may not read it."
        assert chat_server.requests[1].json["messages"][-2:] == [denied_call, denial]
        text, _ = await tool_loop(client, "ok, never mind", stream=stream, messages=messages)
        await client.close()
    assert text == "Fine, I will not."
    # the agent's next request: the hidden exchange is put back before its copy
    sent = chat_server.requests[2].json["messages"]
    assert sent[-4:] == [
        denied_call,
        denial,
        {"role": "assistant", "content": "I may not read it."},
        {"role": "user", "content": "ok, never mind"},
    ]
    _session, state = session_of(proxy)
    call = state.calls["call_b1"]
    assert call.status == "denied"
    assert call.decision.decided_by == "rule" and call.decision.rule == "read_file"
    # the wire: the reply was held, continued; the follow-up is the proxy's own request
    first, hidden, third = state.network.values()
    assert first.released.held and first.released.removed == ["call_b1"]
    assert first.released.continued
    assert hidden.request.sent_body is None
    assert "sent by the proxy" in hidden.request.repairs[0]
    assert third.request.sent_body is not None
    assert third.request.sent_body["messages"][2]["content"] == text_of(messages[2])
    assert third.request.body["messages"] == sent


def text_of(message: Any) -> str:
    return message["content"] if isinstance(message, dict) else message.content


async def test_one_call_of_two_denied(chat_server, tmp_path):
    from tests.support.chat_server import finish, role_chunk, stream_reply, tool_call_chunks

    chunks = (
        [role_chunk()]
        + tool_call_chunks(0, "call_a", "read_file", '{"path": "a.txt"}')
        + tool_call_chunks(1, "call_b", "read_file", '{"path": "b.txt"}')
        + [finish("tool_calls")]
    )
    chat_server.script(stream_reply(chunks), text_reply("Only a."))
    async with running_proxy(chat_server, tmp_path, deny=['read_file(path="b.txt")']) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        ran: list[str] = []
        text, _ = await tool_loop(client, "read both", stream=True, ran=ran)
        await client.close()
    assert ran == ["a.txt"] and text == "Only a."
    sent = chat_server.requests[1].json["messages"]
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_a", "call_b"]
    assert sent[3:] == [
        {"role": "tool", "tool_call_id": "call_a", "content": "alpha contents"},
        {
            "role": "tool",
            "tool_call_id": "call_b",
            "content": 'Permission denied by rule read_file(path="b.txt") (--deny)',
        },
    ]
    _session, state = session_of(proxy)
    assert state.calls["call_a"].status == "done"
    assert state.calls["call_b"].status == "denied"
