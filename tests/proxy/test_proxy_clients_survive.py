"""Holds clients survive: keep-alives while a call waits, an SDK's retry is the same
conversation, and a conversation whose client went away ends (shown and recorded)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai

from tests.proxy.helpers import AGENT_KEY, READ_FILE, running_proxy, session_of, tool_reply
from workbench.pauses import Resume
from workbench.sse import KEEPALIVE

ASK = {
    "model": "test-model",
    "messages": [{"role": "user", "content": "read a.txt"}],
    "tools": [READ_FILE],
}


def paused_event(proxy: Any) -> asyncio.Event:
    paused = asyncio.Event()
    proxy.on_conversation.append(
        lambda conv: conv.agent.subscribe(
            lambda e, _s=None: paused.set() if e.type == "step_paused" else None
        )
    )
    return paused


def resume(proxy: Any, conv_number: int = 1) -> None:
    stepper = proxy.conversations[conv_number - 1].runtime.stepper
    stepper.resume(stepper.paused.pause_id, Resume("continue"))


async def test_a_held_stream_gets_keepalive_comments_until_it_is_released(chat_server, tmp_path):
    chat_server.script(tool_reply("call_k1", "a.txt"))
    async with running_proxy(
        chat_server, tmp_path, breakpoints=["read_file"], keepalive=0.05
    ) as proxy:
        paused = paused_event(proxy)
        got = b""
        async with httpx2.AsyncClient(timeout=10) as http:
            async with http.stream(
                "POST", proxy.url + "/chat/completions", json={**ASK, "stream": True}
            ) as r:
                pieces = r.aiter_raw()
                while got.count(KEEPALIVE) < 2:
                    got += await anext(pieces)
                assert paused.is_set() and b"call_k1" not in got  # still held
                resume(proxy)
                async for piece in pieces:
                    got += piece
    assert b"call_k1" in got and got.rstrip().endswith(b"[DONE]")


async def test_a_held_whole_response_is_led_by_whitespace_and_still_parses(chat_server, tmp_path):
    chat_server.script(tool_reply("call_k2", "a.txt", streamed=False))
    async with running_proxy(
        chat_server, tmp_path, breakpoints=["read_file"], keepalive=0.05
    ) as proxy:
        paused = paused_event(proxy)
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        task = asyncio.create_task(client.chat.completions.create(**ASK))
        await asyncio.wait_for(paused.wait(), 10)
        conv = proxy.conversations[0]
        while not conv.inflight.ready.is_set():  # the first keep-alive started the body
            await asyncio.sleep(0.01)
        resume(proxy)
        done = await asyncio.wait_for(task, 10)
        await client.close()
    assert done.choices[0].message.tool_calls[0].id == "call_k2"


async def test_an_sdk_retry_during_a_hold_is_the_same_conversation(chat_server, tmp_path):
    """A whole response waits for its head, so the SDK's read timeout fires and it asks
    again (a stream's head goes out at once, and SDKs do not retry a stream)."""
    chat_server.script(tool_reply("call_k3", "a.txt", streamed=False))
    async with running_proxy(
        chat_server, tmp_path, breakpoints=["read_file"], keepalive=0
    ) as proxy:
        paused = paused_event(proxy)
        client = openai.AsyncOpenAI(
            base_url=proxy.url, api_key=AGENT_KEY, max_retries=2, timeout=httpx2.Timeout(0.5)
        )
        task = asyncio.create_task(client.chat.completions.create(**ASK))
        await asyncio.wait_for(paused.wait(), 10)
        conv = proxy.conversations[0]
        while conv.inflight.follower is None:  # the SDK timed out and asked again
            await asyncio.sleep(0.02)
        resume(proxy)
        done = await asyncio.wait_for(task, 10)
        await client.close()
    assert [c.id for c in done.choices[0].message.tool_calls] == ["call_k3"]
    assert len(proxy.conversations) == 1 and len(chat_server.requests) == 1


async def test_a_conversation_whose_client_went_away_ends_and_says_so(chat_server, tmp_path):
    chat_server.script(tool_reply("call_k4", "a.txt"))
    async with running_proxy(
        chat_server, tmp_path, breakpoints=["read_file"], keepalive=0, retry_grace=0.05
    ) as proxy:
        paused = paused_event(proxy)
        async with httpx2.AsyncClient(timeout=10) as http:
            async with http.stream(
                "POST", proxy.url + "/chat/completions", json={**ASK, "stream": True}
            ):
                await asyncio.wait_for(paused.wait(), 10)
        conv = proxy.conversations[0]
        await asyncio.wait_for(conv.agent.wait_for_idle(), 10)
    assert conv.ended.startswith("the client went away")
    _, state = session_of(proxy)
    call = state.calls["call_k4"]
    assert call.status == "aborted" and "The client went away" in call.result_text


async def test_a_reply_going_on_upstream_keeps_its_client_alive_while_paused(chat_server, tmp_path):
    """Step mode pauses before each model request, the proxy's own too: the agent's
    stream, whose call was denied, gets keep-alives until the pause is resumed."""
    from tests.proxy.helpers import text_reply

    chat_server.script(tool_reply("call_k9", "a.txt"), text_reply("I may not."))
    got = bytearray()

    async def read(url: str) -> None:
        async with httpx2.AsyncClient(timeout=10) as http:
            async with http.stream(
                "POST", url + "/chat/completions", json={**ASK, "stream": True}
            ) as r:
                async for piece in r.aiter_raw():
                    got.extend(piece)

    async with running_proxy(
        chat_server, tmp_path, deny=["read_file"], step=True, keepalive=0.05
    ) as proxy:
        paused = paused_event(proxy)
        reading = asyncio.create_task(read(proxy.url))
        await asyncio.wait_for(paused.wait(), 10)  # before the agent's request
        paused.clear()
        stepper = proxy.conversations[0].runtime.stepper
        stepper.resume(stepper.paused.pause_id, Resume("step"))
        await asyncio.wait_for(paused.wait(), 10)  # before the proxy's own
        while got.count(KEEPALIVE) < 2:
            await asyncio.sleep(0.01)
        assert len(chat_server.requests) == 1  # the proxy's request waits for the pause
        resume(proxy)
        await asyncio.wait_for(reading, 10)
    from workbench.sse import SSESplitter

    chunks = [e.json() for e in SSESplitter().feed(bytes(got)) if e.data not in (None, "[DONE]")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "I may not." and b"call_k9" not in got
    assert bytes(got).rstrip().endswith(b"[DONE]")
    assert chat_server.requests[1].json["messages"][-1]["tool_call_id"] == "call_k9"
