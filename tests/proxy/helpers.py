"""Running the proxy in a test, and a hand-written tool loop on the plain `openai` SDK."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai

from tests.support.chat_server import (
    ChatServer,
    completion,
    finish,
    role_chunk,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from workbench.proxy import Proxy, ProxyOptions
from workbench.sessions.reader import read_session
from workbench.view.fold import ViewState, fold

UPSTREAM_KEY = "sk-upstream-secret-123"
AGENT_KEY = "sk-agent-dummy-456"

READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}


@contextlib.asynccontextmanager
async def running_proxy(server: ChatServer, tmp_path: Path, **options: Any) -> AsyncIterator[Proxy]:
    opts = ProxyOptions(
        upstream=server.url,
        api_key=UPSTREAM_KEY,
        port=0,
        approve="rules",
        session_dir=tmp_path / "sessions",
        workspace=tmp_path,
        **options,
    )
    async with Proxy(opts).running() as proxy:
        yield proxy


def tool_reply(call_id: str, path: str, *, streamed: bool = True, text: str = "") -> Any:
    arguments = json.dumps({"path": path})
    if not streamed:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "read_file", "arguments": arguments},
        }
        from tests.support.chat_server import Reply

        return Reply.json(completion(text or None, tool_calls=[call], finish_reason="tool_calls"))
    chunks = [role_chunk()] + (text_chunks(text, 2) if text else [])
    return stream_reply(
        chunks + tool_call_chunks(0, call_id, "read_file", arguments) + [finish("tool_calls")]
    )


def text_reply(text: str, *, streamed: bool = True) -> Any:
    if not streamed:
        from tests.support.chat_server import Reply

        return Reply.json(completion(text))
    return stream_reply([role_chunk(), *text_chunks(text, 3), finish("stop")])


FILES = {"a.txt": "alpha contents", "b.txt": "beta contents"}


def read_file(path: str) -> str:
    return FILES.get(path, f"no such file: {path}")


async def tool_loop(
    client: openai.AsyncOpenAI,
    prompt: str,
    *,
    stream: bool,
    ran: list[str] | None = None,
    messages: list[dict[str, Any]] | None = None,
    max_turns: int = 5,
) -> tuple[str, list[dict[str, Any]]]:
    """A minimal agent: ask, run each read_file call locally, send the results back."""
    messages = (
        messages if messages is not None else [{"role": "system", "content": "You read files."}]
    )
    messages.append({"role": "user", "content": prompt})
    for _ in range(max_turns):
        text, calls = await _ask(client, messages, stream)
        reply: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            reply["tool_calls"] = calls
        messages.append(reply)
        if not calls:
            return text, messages
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            if ran is not None:
                ran.append(args["path"])
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": read_file(args["path"])}
            )
    raise AssertionError("the loop did not end")


async def _ask(
    client: openai.AsyncOpenAI, messages: list[dict[str, Any]], stream: bool
) -> tuple[str, list[dict[str, Any]]]:
    if not stream:
        done = await client.chat.completions.create(
            model="test-model", messages=messages, tools=[READ_FILE]
        )
        message = done.choices[0].message
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls or []
        ]
        return message.content or "", calls
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    response = await client.chat.completions.create(
        model="test-model", messages=messages, tools=[READ_FILE], stream=True
    )
    async for chunk in response:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for c in delta.tool_calls or []:
            slot = calls.setdefault(
                c.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            slot["id"] = c.id or slot["id"]
            if c.function is not None:
                slot["function"]["name"] += c.function.name or ""
                slot["function"]["arguments"] += c.function.arguments or ""
    return text, [calls[i] for i in sorted(calls)]


def session_of(proxy: Proxy, number: int = 1) -> tuple[Any, ViewState]:
    conv = proxy.conversations[number - 1]
    assert conv.recorder is not None
    session = read_session(conv.recorder.path)
    return session, fold(session.events)


def edit_at_breakpoint(proxy: Proxy, **changes: Any) -> None:
    """Every conversation of `proxy`: a call paused at a breakpoint goes on with its
    arguments changed by `changes` (as a person's edit in the app)."""
    import asyncio

    from workbench.pauses import Resume

    def watch(conv: Any) -> None:
        stepper = conv.runtime.stepper

        def on_event(event: Any, _signal: Any = None) -> None:
            if event.type == "step_paused":
                args = {**(stepper.paused.args or {}), **changes}
                loop = asyncio.get_running_loop()
                loop.call_soon(stepper.resume, stepper.paused.pause_id, Resume.edit(args))

        conv.agent.subscribe(on_event)

    proxy.on_conversation.append(watch)
