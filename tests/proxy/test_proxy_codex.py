"""Codex CLI, the real one (npm, pinned; installed on first use), through the proxy to
a scripted Responses upstream (`wire_api = "responses"`): allowed, its exec_command
tool runs and it finishes; denied, the tool never runs and it still finishes;
edited, the tool runs the edited command; each conversation is recorded."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.helpers import edit_at_breakpoint, running_proxy, session_of
from tests.support.chat_server import ReceivedRequest, Reply
from tests.support.upstreams.responses import (
    ResponsesServer,
    function_call,
    message,
    responses_stream,
)

pytestmark = pytest.mark.clients

COMMAND = "echo allowed > marker.txt"


def model(request: ReceivedRequest) -> Reply:
    """Asks for one exec_command call, then says it finished."""
    items = [i for i in request.json["input"] if isinstance(i, dict)]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    if outputs:
        answer = outputs[-1].get("output")
        text = answer if isinstance(answer, str) and answer.startswith("Permission") else "ok"
        return responses_stream([message(f"finished: {text}", "msg_2")], response_id="resp_2")
    call = function_call("call_cx1", "exec_command", json.dumps({"cmd": COMMAND}))
    return responses_stream([call])


async def run_codex(exe: Path, proxy: Any, tmp_path: Path) -> tuple[int, str, Path]:
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(
        'model = "test-model"\nmodel_provider = "workbench"\n'
        "[model_providers.workbench]\n"
        f'name = "workbench"\nbase_url = "{proxy.url}"\n'
        'wire_api = "responses"\nenv_key = "WORKBENCH_TEST_KEY"\n'
    )
    # a home of its own: Codex runs commands in a login shell, which would read the
    # machine's profile (a slow one outlasts Codex's wait for the command)
    env = {
        **os.environ,
        "CODEX_HOME": str(home),
        "HOME": str(home),
        "WORKBENCH_TEST_KEY": "sk-test",
    }
    process = await asyncio.create_subprocess_exec(
        str(exe),
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
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


@pytest.fixture
def responses_server():
    with ResponsesServer() as server:
        server.default = model
        yield server


def the_call(proxy: Any) -> Any:
    calls = [session_of(proxy, c.number)[1].calls.get("call_cx1") for c in proxy.conversations]
    (call,) = [c for c in calls if c is not None]
    return call


async def test_codex_allowed_runs_its_tool_and_finishes(codex, responses_server, tmp_path):
    async with running_proxy(responses_server, tmp_path) as proxy:
        code, out, work = await run_codex(codex, proxy, tmp_path)
    assert code == 0, out
    assert "finished" in out
    assert (work / "marker.txt").read_text().strip() == "allowed"
    call = the_call(proxy)
    assert call.name == "exec_command" and call.status == "done"


async def test_codex_denied_never_runs_the_tool_and_still_finishes(
    codex, responses_server, tmp_path
):
    async with running_proxy(responses_server, tmp_path, deny=["exec_command"]) as proxy:
        code, out, work = await run_codex(codex, proxy, tmp_path)
    assert code == 0, out
    # the model was told in the same turn, and Codex printed its answer
    assert "finished: Permission denied by rule exec_command (--deny)" in out
    assert not (work / "marker.txt").exists()
    assert the_call(proxy).status == "denied"


async def test_codex_edited_runs_the_edited_command(codex, responses_server, tmp_path):
    async with running_proxy(responses_server, tmp_path, breakpoints=["exec_command"]) as proxy:
        edit_at_breakpoint(proxy, cmd="echo edited > edited.txt")
        code, out, work = await run_codex(codex, proxy, tmp_path)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert (work / "edited.txt").read_text().strip() == "edited"
    call = the_call(proxy)
    assert call.edited_args == {"cmd": "echo edited > edited.txt"} and call.status == "done"
