"""Gemini CLI, the real one (npm, pinned; installed on first use), through the proxy to
a scripted Gemini upstream (`streamGenerateContent?alt=sse`, API-key auth): allowed,
its run_shell_command tool runs and it finishes; denied, the tool never runs and it
still finishes; edited, the tool runs the edited command; each conversation is
recorded as one, though Gemini CLI gives the call an id of its own."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.helpers import edit_at_breakpoint, running_proxy, session_of
from tests.support.chat_server import ReceivedRequest, Reply
from tests.support.upstreams.gemini import (
    GeminiServer,
    function_call,
    gemini_stream,
    gemini_whole,
)

pytestmark = pytest.mark.clients

COMMAND = "echo allowed > marker.txt"
CALL = "run_shell_command#0.0"


def model(request: ReceivedRequest) -> Reply:
    """Asks for one shell call, then says it finished (and the denial, if it was told one);
    a tool-less side request gets text."""
    body = request.json
    contents = body.get("contents") or []
    last = contents[-1].get("parts", []) if contents else []
    answers = [p["functionResponse"] for p in last if "functionResponse" in p]
    if answers:
        said = json.dumps(answers[-1].get("response"))
        told = said if "Permission denied" in said else "ok"
        parts: list[dict[str, Any]] = [{"text": f"finished: {told}"}]
    elif body.get("tools"):
        parts = [function_call("run_shell_command", {"command": COMMAND, "description": "mark"})]
    else:
        parts = [{"text": "ok"}]
    return gemini_stream(parts) if "stream" in request.path else gemini_whole(parts)


async def run_gemini(exe: Path, proxy: Any, tmp_path: Path) -> tuple[int, str, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))},
        "HOME": str(home),
        "GEMINI_API_KEY": "gemini-test-key",
        "GOOGLE_GEMINI_BASE_URL": proxy.url.removesuffix("/v1"),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    process = await asyncio.create_subprocess_exec(
        str(exe),
        "-p",
        "write the marker",
        "--model",
        "gemini-test",
        "--approval-mode",
        "yolo",
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode() + err.decode(), work


@pytest.fixture
def gemini_server():
    with GeminiServer() as server:
        server.default = model
        yield server


def the_call(proxy: Any) -> Any:
    calls = [session_of(proxy, c.number)[1].calls.get(CALL) for c in proxy.conversations]
    (call,) = [c for c in calls if c is not None]
    return call


async def test_gemini_cli_allowed_runs_its_tool_and_finishes(gemini_cli, gemini_server, tmp_path):
    async with running_proxy(gemini_server, tmp_path) as proxy:
        code, out, work = await run_gemini(gemini_cli, proxy, tmp_path)
    assert code == 0, out
    assert "finished" in out
    assert (work / "marker.txt").read_text().strip() == "allowed"
    call = the_call(proxy)
    assert call.name == "run_shell_command" and call.status == "done"
    # its answer joined the call's conversation: one conversation, the call's result in it
    assert len(proxy.conversations) == 1
    sent = gemini_server.requests[0]
    assert (
        sent.headers["x-goog-api-key"] != "gemini-test-key"
    )  # the upstream's key, not the agent's


async def test_gemini_cli_denied_never_runs_the_tool_and_still_finishes(
    gemini_cli, gemini_server, tmp_path
):
    async with running_proxy(gemini_server, tmp_path, deny=["run_shell_command"]) as proxy:
        code, out, work = await run_gemini(gemini_cli, proxy, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert the_call(proxy).status == "denied"
    # the model was told in the same turn, and Gemini CLI printed its answer
    assert "finished: " in out and "Permission denied by rule run_shell_command (--deny)" in out


async def test_gemini_cli_edited_runs_the_edited_command(gemini_cli, gemini_server, tmp_path):
    breakpoints = ["run_shell_command"]
    async with running_proxy(gemini_server, tmp_path, breakpoints=breakpoints) as proxy:
        edit_at_breakpoint(proxy, command="echo edited > edited.txt")
        code, out, work = await run_gemini(gemini_cli, proxy, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert (work / "edited.txt").read_text().strip() == "edited"
    call = the_call(proxy)
    assert call.edited_args["command"] == "echo edited > edited.txt" and call.status == "done"
