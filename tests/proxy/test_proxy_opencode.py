"""opencode, the real one (npm, pinned; installed on first use), through the proxy to a
scripted chat-completions upstream (an `@ai-sdk/openai-compatible` provider in its
project config): allowed, its bash tool runs and it finishes; denied, the tool never
runs and it still finishes; edited, the tool runs the edited command; each
conversation is recorded, its title request shown as a tool-less side request."""

from __future__ import annotations

import asyncio
import json
import os
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
from tests.support.clients import cache_root

pytestmark = [pytest.mark.clients, pytest.mark.xdist_group("opencode")]

COMMAND = "echo allowed > marker.txt"


def model(request: ReceivedRequest) -> Reply:
    """Asks for one bash call, then says it finished (and the denial, if it was told one);
    a tool-less side request gets text."""
    body = request.json
    messages = body.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        answer = str(messages[-1].get("content"))
        told = answer if answer.startswith("Permission denied") else "ok"
        return stream_reply([role_chunk(), *text_chunks(f"finished: {told}", 2), finish("stop")])
    if body.get("tools"):
        args = json.dumps({"command": COMMAND, "description": "mark"})
        chunks = tool_call_chunks(0, "call_oc1", "bash", args)
        return stream_reply([role_chunk(), *chunks, finish("tool_calls")])
    return stream_reply([role_chunk(), *text_chunks("a title", 1), finish("stop")])


async def run_opencode(exe: Path, proxy: Any, tmp_path: Path) -> tuple[int, str, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "workbench",
        "options": {"baseURL": proxy.url, "apiKey": "sk-test"},
        "models": {"test-model": {"name": "test-model", "tool_call": True}},
    }
    config = {
        "provider": {"workbench": provider},
        "model": "workbench/test-model",
        "permission": {"bash": "allow", "edit": "allow"},
        "autoupdate": False,
        "share": "disabled",
    }
    (work / "opencode.json").write_text(json.dumps(config))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENCODE_"))},
        "PWD": str(work),  # opencode takes its project from PWD, not from its working directory
        "HOME": str(home),
        # its plugins are installed into its config folder at start: once, shared
        "XDG_CONFIG_HOME": str(cache_root() / "opencode-config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(cache_root() / "opencode-cache"),
        "npm_config_cache": str(cache_root() / "npm-cache"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
    }
    process = await asyncio.create_subprocess_exec(
        str(exe),
        "run",
        "write the marker",
        "--model",
        "workbench/test-model",
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode() + err.decode(), work


@pytest.fixture
def opencode_server():
    with ChatServer() as server:
        server.default = model
        yield server


def the_call(proxy: Any) -> Any:
    calls = [session_of(proxy, c.number)[1].calls.get("call_oc1") for c in proxy.conversations]
    (call,) = [c for c in calls if c is not None]
    return call


async def test_opencode_allowed_runs_its_tool_and_finishes(opencode, opencode_server, tmp_path):
    async with running_proxy(opencode_server, tmp_path) as proxy:
        code, out, work = await run_opencode(opencode, proxy, tmp_path)
    assert code == 0, out
    assert "finished" in out
    assert (work / "marker.txt").read_text().strip() == "allowed"
    call = the_call(proxy)
    assert call.name == "bash" and call.status == "done"


async def test_opencode_denied_never_runs_the_tool_and_still_finishes(
    opencode, opencode_server, tmp_path
):
    async with running_proxy(opencode_server, tmp_path, deny=["bash"]) as proxy:
        code, out, work = await run_opencode(opencode, proxy, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert the_call(proxy).status == "denied"
    # the model was told in the same turn, and opencode printed its answer
    assert "finished: Permission denied by rule bash (--deny)" in out


async def test_opencode_edited_runs_the_edited_command(opencode, opencode_server, tmp_path):
    async with running_proxy(opencode_server, tmp_path, breakpoints=["bash"]) as proxy:
        edit_at_breakpoint(proxy, command="echo edited > edited.txt")
        code, out, work = await run_opencode(opencode, proxy, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert (work / "edited.txt").read_text().strip() == "edited"
    call = the_call(proxy)
    assert call.edited_args["command"] == "echo edited > edited.txt" and call.status == "done"
