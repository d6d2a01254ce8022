"""When a response waits for the decisions, and when it streams straight through."""

from __future__ import annotations

import asyncio
import json
import time

import httpx2
import openai

from tests.proxy.helpers import (
    AGENT_KEY,
    running_proxy,
    session_of,
    text_reply,
    tool_loop,
    tool_reply,
)
from tests.support.chat_server import Pause, Reply, finish, role_chunk, sse, text_chunks
from workbench.proxy.conversation import NO_RESULT
from workbench.stepper import Resume


async def test_a_stream_no_rule_asks_about_goes_straight_through(chat_server, tmp_path):
    pieces = [
        sse(role_chunk()),
        sse(text_chunks("first", 1)[0]),
        Pause(0.6),
        sse(text_chunks("second", 1)[0]),
        sse(finish()),
    ]
    chat_server.script(Reply(pieces=[*pieces, b"data: [DONE]\n\n"]))
    async with running_proxy(chat_server, tmp_path, deny=["write_file"]) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        arrived: dict[str, float] = {}
        stream = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                arrived[chunk.choices[0].delta.content] = time.monotonic()
        await client.close()
    # "first" reached the agent while the upstream was still pausing before "second"
    assert arrived["second"] - arrived["first"] > 0.4
    _, state = session_of(proxy)
    (record,) = state.network.values()
    assert record.released is not None and not record.released.held and not record.released.changed


async def test_a_breakpoint_holds_the_call_and_edited_arguments_are_what_the_agent_runs(
    chat_server, tmp_path
):
    chat_server.script(tool_reply("call_e1", "a.txt", text="Looking."), text_reply("done"))
    paused = asyncio.Event()
    async with running_proxy(chat_server, tmp_path, breakpoints=["read_file"]) as proxy:
        proxy.on_conversation.append(
            lambda conv: conv.agent.subscribe(
                lambda e, _s=None: paused.set() if e.type == "step_paused" else None
            )
        )
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        ran: list[str] = []
        loop = asyncio.create_task(tool_loop(client, "read a.txt", stream=True, ran=ran))
        await asyncio.wait_for(paused.wait(), 10)
        assert ran == [] and not loop.done()  # the call waits at the breakpoint
        stepper = proxy.conversations[0].runtime.stepper
        stepper.resume(stepper.paused.pause_id, Resume.edit({"path": "b.txt"}))
        text, _ = await asyncio.wait_for(loop, 10)
        await client.close()
    assert ran == ["b.txt"] and text == "done"
    sent = chat_server.requests[1].json["messages"]
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == '{"path": "b.txt"}'
    assert sent[3] == {"role": "tool", "tool_call_id": "call_e1", "content": "beta contents"}
    _, state = session_of(proxy)
    call = state.calls["call_e1"]
    assert call.raw == '{"path": "a.txt"}' and call.edited_args == {"path": "b.txt"}
    assert call.result_text == "beta contents"
    first = next(iter(state.network.values()))
    assert first.released.held and first.released.changed and first.released.removed == []
    released = [json.loads(c) for c in first.released.chunks if c != "[DONE]"]
    calls = [
        tc for c in released for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])
    ]
    assert calls == [
        {
            "index": 0,
            "id": "call_e1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "b.txt"}'},
        }
    ]


async def test_a_call_whose_result_never_comes_back_is_flagged(chat_server, tmp_path):
    chat_server.script(tool_reply("call_m1", "a.txt"), text_reply("ok"))
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        messages = [{"role": "user", "content": "read a.txt"}]
        stream = await client.chat.completions.create(
            model="test-model", messages=messages, stream=True
        )
        async for _ in stream:
            pass
        call = {
            "id": "call_m1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "user", "content": "never mind"},
        ]
        stream = await client.chat.completions.create(
            model="test-model", messages=messages, stream=True
        )
        async for _ in stream:
            pass
        await client.close()
    assert len(proxy.conversations) == 1
    assert proxy.conversations[0].never_answered == ["call_m1"]
    _, state = session_of(proxy)
    assert state.calls["call_m1"].status == "error"
    assert state.calls["call_m1"].result_text == NO_RESULT


async def test_other_paths_pass_through_with_the_upstream_key(chat_server, tmp_path):
    async with running_proxy(chat_server, tmp_path) as proxy:
        async with httpx2.AsyncClient() as http:
            response = await http.get(
                f"{proxy.url}/models", headers={"authorization": f"Bearer {AGENT_KEY}"}
            )
    assert response.status_code == 404
    assert response.json() == {"error": {"message": "no route GET /v1/models"}}
    assert proxy.conversations == []


async def test_a_breakpoint_added_in_one_conversation_holds_the_calls_of_every_other(
    chat_server, tmp_path
):
    chat_server.script(text_reply("first"), tool_reply("call_b2", "a.txt"))
    paused = asyncio.Event()
    async with running_proxy(chat_server, tmp_path) as proxy:
        proxy.on_conversation.append(
            lambda conv: conv.agent.subscribe(
                lambda e, _s=None: paused.set() if e.type == "step_paused" else None
            )
        )
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        await tool_loop(client, "say something", stream=True)
        await proxy.conversations[0].runtime.stepper.add_breakpoint("read_file")  # as the app does
        ran: list[str] = []
        loop = asyncio.create_task(
            tool_loop(client, "read a.txt", stream=True, ran=ran, messages=[])
        )
        await asyncio.wait_for(paused.wait(), 10)
        second = proxy.conversations[1]
        assert ran == [] and second.runtime.stepper.paused.tool_name == "read_file"
        loop.cancel()
        await client.close()
