"""pi's coding agent, the real one (npm, pinned, under Node 22 from npm; installed on
first use), through the proxy to a scripted upstream, once per wire format pi speaks
to a custom provider (chat completions and Anthropic Messages): allowed, its bash tool
runs and it finishes; denied, the tool never runs and it still finishes; edited, the
tool runs the edited command; each conversation is recorded."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.helpers import edit_at_breakpoint, running_proxy, session_of
from tests.support.chat_server import (
    ChatServer,
    ReceivedRequest,
    Reply,
    finish,
    role_chunk,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from tests.support.upstreams.anthropic import (
    AnthropicServer,
    anthropic_stream,
    anthropic_whole,
    text_block,
    tool_use,
)

pytestmark = pytest.mark.clients

COMMAND = "echo allowed > marker.txt"
CALL = "call_pi1"


def said(answer: dict[str, Any]) -> str:
    """What the scripted model says on a call's answer: the denial, if it was told one."""
    content = answer.get("content")
    if isinstance(content, list):
        content = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    text = str(content)
    return f"finished: {text if text.startswith('Permission denied') else 'ok'}"


def chat_model(request: ReceivedRequest) -> Reply:
    messages = request.json.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return stream_reply([role_chunk(), *text_chunks(said(messages[-1]), 2), finish("stop")])
    chunks = tool_call_chunks(0, CALL, "bash", json.dumps({"command": COMMAND}))
    return stream_reply([role_chunk(), *chunks, finish("tool_calls")])


def anthropic_model(request: ReceivedRequest) -> Reply:
    body = request.json
    last = body["messages"][-1]["content"]
    blocks = last if isinstance(last, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        content = [text_block(said(results[-1]))]
    else:
        content = [tool_use(CALL, "bash", {"command": COMMAND})]
    return anthropic_stream(content) if body.get("stream") else anthropic_whole(content)


FORMATS = {
    "chat": (ChatServer, chat_model, "openai-completions"),
    "anthropic": (AnthropicServer, anthropic_model, "anthropic-messages"),
}


@pytest.fixture(params=sorted(FORMATS))
def upstream(request: pytest.FixtureRequest) -> Iterator[tuple[ChatServer, str]]:
    server_class, model, api = FORMATS[request.param]
    with server_class() as server:
        server.default = model
        yield server, api


async def run_pi(pi: list[str], proxy: Any, api: str, tmp_path: Path) -> tuple[int, str, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    work.mkdir()
    base = proxy.url if api == "openai-completions" else proxy.url.removesuffix("/v1")
    provider = {
        "baseUrl": base,
        "api": api,
        "apiKey": "sk-test",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "test-model"}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"workbench": provider}}))
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PI_", "OPENAI_", "ANTHROPIC_"))
        },
        "PWD": str(work),
        "HOME": str(home),
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
        "PI_SKIP_VERSION_CHECK": "1",
    }
    process = await asyncio.create_subprocess_exec(
        *pi,
        "-p",
        "--no-session",
        "--provider",
        "workbench",
        "--model",
        "test-model",
        "write the marker",
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode() + err.decode(), work


def the_call(proxy: Any) -> Any:
    calls = [session_of(proxy, c.number)[1].calls.get(CALL) for c in proxy.conversations]
    (call,) = [c for c in calls if c is not None]
    return call


async def test_pi_allowed_runs_its_tool_and_finishes(pi, upstream, tmp_path):
    server, api = upstream
    async with running_proxy(server, tmp_path) as proxy:
        code, out, work = await run_pi(pi, proxy, api, tmp_path)
    assert code == 0, out
    assert "finished" in out
    assert (work / "marker.txt").read_text().strip() == "allowed"
    call = the_call(proxy)
    assert call.name == "bash" and call.status == "done"


async def test_pi_denied_never_runs_the_tool_and_still_finishes(pi, upstream, tmp_path):
    server, api = upstream
    async with running_proxy(server, tmp_path, deny=["bash"]) as proxy:
        code, out, work = await run_pi(pi, proxy, api, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert the_call(proxy).status == "denied"
    # the model was told in the same turn, and pi printed its answer
    assert "finished: Permission denied by rule bash (--deny)" in out


async def test_pi_edited_runs_the_edited_command(pi, upstream, tmp_path):
    server, api = upstream
    async with running_proxy(server, tmp_path, breakpoints=["bash"]) as proxy:
        edit_at_breakpoint(proxy, command="echo edited > edited.txt")
        code, out, work = await run_pi(pi, proxy, api, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert (work / "edited.txt").read_text().strip() == "edited"
    call = the_call(proxy)
    assert call.edited_args["command"] == "echo edited > edited.txt" and call.status == "done"
