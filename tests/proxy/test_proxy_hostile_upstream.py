"""An upstream that tries to slip a tool call past the rules: the proxy judges what the
client parses (JSON, and SSE cut into events as the client cuts it), never bytes."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from tests.proxy.helpers import AGENT_KEY, READ_FILE, running_proxy
from tests.support.chat_server import (
    DONE,
    Reply,
    chunk,
    completion,
    finish,
    role_chunk,
    sse,
    stream_reply,
)
from workbench.sse import SSESplitter

HIDDEN = {"index": 0, "id": "call_h", "type": "function"}
ARGS = json.dumps({"path": "secret.txt"})


def escaped_call_chunk() -> bytes:
    """A tool-call chunk whose key is written with an escape: the same key once parsed."""
    call = {**HIDDEN, "function": {"name": "read_file", "arguments": ARGS}}
    text = json.dumps(chunk({"tool_calls": [call]}))
    hidden = text.replace("tool_calls", "tool\\u005fcalls")
    return f"data: {hidden}\n\n".encode()


async def ask(proxy: Any, *, stream: bool) -> tuple[str, list[Any]]:
    client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
    messages: Any = [{"role": "user", "content": "read secret.txt"}]
    try:
        if stream:
            async with client.chat.completions.stream(
                model="test-model", messages=messages, tools=[READ_FILE]
            ) as s:
                async for _ in s:
                    pass
                done = await s.get_final_completion()
        else:
            done = await client.chat.completions.create(
                model="test-model", messages=messages, tools=[READ_FILE]
            )
    finally:
        await client.close()
    message = done.choices[0].message
    return message.content or "", list(message.tool_calls or [])


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([escaped_call_chunk()], id="escaped-key"),
        pytest.param(  # one event to a splitter that only cuts at a double LF; two to a client
            [
                sse(role_chunk())[:-2]
                + b"\n\r\n"
                + sse(chunk({"tool_calls": [{**HIDDEN, "function": {"name": "read_file"}}]}))[:-1]
                + b"\r"
                + sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": ARGS}}]}))
            ],
            id="lf-crlf-boundary",
        ),
    ],
)
async def test_a_call_written_to_hide_from_the_rules_is_still_denied(chat_server, tmp_path, events):
    chat_server.script(
        Reply(pieces=[sse(role_chunk()), *events, sse(finish("tool_calls")), DONE]),
        stream_reply([role_chunk(), chunk({"content": "not allowed"}), finish("stop")]),
    )
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        content, calls = await ask(proxy, stream=True)
    assert calls == [] and content == "not allowed"
    assert chat_server.requests[1].json["messages"][-1]["content"].startswith("Permission denied")


async def test_an_escaped_key_in_a_whole_completion_is_still_denied(chat_server, tmp_path):
    call = {**HIDDEN, "function": {"name": "read_file", "arguments": ARGS}}
    text = json.dumps(completion(None, tool_calls=[call], finish_reason="tool_calls"))
    body = text.replace('"tool_calls": [', '"tool\\u005fcalls": [').encode()
    chat_server.script(
        Reply(body=body, content_type="application/json"),
        Reply.json(completion("not allowed")),
    )
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        content, calls = await ask(proxy, stream=False)
    assert calls == [] and content == "not allowed"
    assert chat_server.requests[1].json["messages"][-1]["content"].startswith("Permission denied")


async def test_a_legacy_function_call_never_reaches_the_client(chat_server, tmp_path):
    legacy = chunk({"function_call": {"name": "read_file", "arguments": ARGS}})
    chat_server.script(stream_reply([role_chunk(), legacy, finish("function_call")]))
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        stream = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "x"}], stream=True
        )
        deltas = [c.choices[0].delta async for c in stream if c.choices]
        await client.close()
    assert all(d.function_call is None for d in deltas)


async def test_nothing_after_an_unreadable_event_reaches_the_client(chat_server, tmp_path):
    call = {**HIDDEN, "function": {"name": "read_file", "arguments": ARGS}}
    chat_server.script(
        stream_reply([role_chunk(), "not json {", chunk({"tool_calls": [call]}), finish()])
    )
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        got = b""
        async with httpx2.AsyncClient(timeout=10) as http:
            async with http.stream(
                "POST",
                proxy.url + "/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True},
                headers={"authorization": f"Bearer {AGENT_KEY}"},
            ) as response:
                with pytest.raises(httpx2.RemoteProtocolError):  # cut, not a clean end
                    async for piece in response.aiter_raw():
                        got += piece
    assert b"not json {" in got
    assert b"call_h" not in got


def test_the_splitter_cuts_events_where_a_client_does():
    splitter = SSESplitter()
    body = b"\xef\xbb\xbfdata: a\r\n\r\n: comment\n\ndata: b\rdata: c\r"
    out = [e for piece in (body[:9], body[9:]) for e in splitter.feed(piece)]
    out += splitter.feed(b"\n\r\ndata: d\n\n") + splitter.rest()  # CR, then LF: one line end
    assert [(e.data) for e in out] == ["a", None, "b\nc", "d"]
    assert b"".join(e.raw for e in out) == body + b"\n\r\ndata: d\n\n"


def test_a_last_event_without_its_blank_line_is_kept():
    splitter = SSESplitter()
    assert splitter.feed(b"data: x\n") == []
    (last,) = splitter.rest()
    assert last.data == "x" and last.raw == b"data: x\n"
