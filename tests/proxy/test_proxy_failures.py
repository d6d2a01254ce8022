"""The upstream failing, the agent misbehaving, the proxy stopping: clear errors, nothing lost."""

from __future__ import annotations

import json
import socket

import openai
import pytest

from tests.proxy.helpers import AGENT_KEY, running_proxy, session_of, tool_loop, tool_reply
from tests.support.chat_server import (
    Drop,
    Reply,
    finish,
    role_chunk,
    stream_reply,
    tool_call_chunks,
)
from workbench.proxy import Proxy, ProxyOptions
from workbench.proxy.conversation import PROXY_STOPPED

DENIAL = "Permission denied by rule read_file (--deny)"


def client_of(proxy: Proxy) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)


async def test_an_upstream_error_reaches_the_agent_as_it_was_sent(chat_server, tmp_path):
    chat_server.script(Reply.error(401, {"error": {"message": "bad key upstream"}}))
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = client_of(proxy)
        with pytest.raises(openai.AuthenticationError, match="bad key upstream"):
            await client.chat.completions.create(
                model="test-model", messages=[{"role": "user", "content": "hi"}]
            )
        await client.close()
    _, state = session_of(proxy)
    assert state.run_state == "error" and "bad key upstream" in state.error
    (record,) = state.network.values()
    assert record.response.status == 401


async def test_an_unreachable_upstream_is_a_502_saying_so(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    opts = ProxyOptions(
        upstream=f"http://127.0.0.1:{port}/v1", port=0, session_dir=tmp_path, workspace=tmp_path
    )
    async with Proxy(opts).running() as proxy:
        client = client_of(proxy)
        with pytest.raises(openai.APIStatusError) as info:
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
        await client.close()
    assert info.value.status_code == 502
    assert "The upstream" in info.value.message and "failed" in info.value.message
    _, state = session_of(proxy)
    assert state.run_state == "error"


async def test_a_stream_cut_after_held_calls_never_releases_them(chat_server, tmp_path):
    calls = tool_call_chunks(0, "call_x1", "read_file", '{"path": "a.txt"}')
    chat_server.script(stream_reply([role_chunk(), *calls], done=False, then=[Drop()]))
    async with running_proxy(chat_server, tmp_path, ask=["read_file"]) as proxy:
        client = client_of(proxy)
        ran: list[str] = []
        with pytest.raises(openai.APIError):
            await tool_loop(client, "read a.txt", stream=True, ran=ran)
        await client.close()
    assert ran == []
    _, state = session_of(proxy)
    assert state.calls["call_x1"].status == "error" and state.run_state == "error"


async def test_calls_still_waiting_when_the_proxy_stops_are_flagged(chat_server, tmp_path):
    chat_server.script(tool_reply("call_s1", "a.txt"))
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = client_of(proxy)
        stream = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "read"}], stream=True
        )
        async for _ in stream:
            pass
        await client.close()
    conv = proxy.conversations[0]
    assert conv.never_answered == ["call_s1"]
    _, state = session_of(proxy)
    assert state.calls["call_s1"].status == "error"
    assert state.calls["call_s1"].result_text == PROXY_STOPPED


async def test_finish_reason_and_usage_survive_a_rewrite(chat_server, tmp_path):
    from tests.support.chat_server import usage_chunk
    from workbench.proxy.continuation import MAX_HIDDEN

    # the model asks again each time its call is answered with the denial: after
    # MAX_HIDDEN answers the proxy stops going on, and the reply ends with the notice
    chat_server.script(
        *(
            stream_reply(
                [
                    role_chunk(),
                    *tool_call_chunks(0, f"call_f{n}", "read_file", '{"path": "a.txt"}'),
                    finish("tool_calls"),
                    usage_chunk(10, 5),
                ]
            )
            for n in range(MAX_HIDDEN + 1)
        )
    )
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        client = client_of(proxy)
        stream = await client.chat.completions.create(
            model="test-model",
            messages=[{"role": "user", "content": "read"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [c async for c in stream]
        await client.close()
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 15
    reasons = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert reasons == ["stop"]
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
    assert len(chat_server.requests) == MAX_HIDDEN + 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == f"[workbench] read_file was not run: {DENIAL}"
    assert len(chat_server.requests[-1].json["messages"]) == 1 + 2 * MAX_HIDDEN
    _, state = session_of(proxy)
    released = [
        json.loads(c) for c in list(state.network.values())[-1].released.chunks if c != "[DONE]"
    ]
    assert released[-1]["usage"]["total_tokens"] == 15


async def test_a_tool_name_sent_in_pieces_cannot_slip_past_a_rule(chat_server, tmp_path):
    from tests.support.chat_server import chunk

    pieces = [
        role_chunk(),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_n1",
                        "type": "function",
                        "function": {"name": "read", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "_file"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "b.txt"}'}}]}),
        finish("tool_calls"),
    ]
    chat_server.script(stream_reply(pieces, gap=0.01))
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        client = client_of(proxy)
        ran: list[str] = []
        with pytest.raises(openai.APIError):
            await tool_loop(client, "read b.txt", stream=True, ran=ran)
        await client.close()
    assert ran == []
    _, state = session_of(proxy)
    assert state.calls["call_n1"].name == "read_file" and state.calls["call_n1"].status == "denied"
