"""Claude Code, the real one (npm, pinned; installed on first use), through the proxy
to a scripted Anthropic upstream: allowed, its Bash tool runs and it finishes;
denied, the tool never runs and it still finishes; edited, the tool runs the edited
command; each conversation is recorded."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.helpers import edit_at_breakpoint, running_proxy, session_of
from tests.support.chat_server import ReceivedRequest, Reply
from tests.support.upstreams.anthropic import (
    AnthropicServer,
    anthropic_stream,
    anthropic_whole,
    text_block,
    tool_use,
)

pytestmark = pytest.mark.clients

COMMAND = "echo allowed > marker.txt"


def model(request: ReceivedRequest) -> Reply:
    """Asks for one Bash call, then says what came back; a side request gets text."""
    body = request.json
    last = body["messages"][-1]["content"]
    blocks = last if isinstance(last, list) else []
    names = [t.get("name") for t in body.get("tools") or ()]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        answer = results[-1].get("content")
        content = [text_block(f"finished: {answer if isinstance(answer, str) else 'ok'}")]
    elif "Bash" in names:
        content = [tool_use("toolu_cc1", "Bash", {"command": COMMAND, "description": "mark"})]
    else:
        content = [text_block("ok")]
    return anthropic_stream(content) if body.get("stream") else anthropic_whole(content)


async def run_claude(exe: Path, proxy: Any, work: Path) -> tuple[int, str]:
    home = work / "home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))},
        "ANTHROPIC_BASE_URL": proxy.url.removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(home),
    }
    process = await asyncio.create_subprocess_exec(
        str(exe),
        "-p",
        "write the marker",
        "--allowedTools",
        "Bash",
        "--model",
        "claude-test",
        cwd=work,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode() + err.decode()


def work_dir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def anthropic_server():
    with AnthropicServer() as server:
        server.default = model
        yield server


async def test_claude_code_allowed_runs_its_tool_and_finishes(
    claude_code, anthropic_server, tmp_path
):
    work = work_dir(tmp_path)
    async with running_proxy(anthropic_server, tmp_path) as proxy:
        code, out = await run_claude(claude_code, proxy, work)
    assert code == 0, out
    assert "finished" in out
    assert (work / "marker.txt").read_text().strip() == "allowed"
    conv = next(
        c for c in proxy.conversations if "toolu_cc1" in session_of(proxy, c.number)[1].calls
    )
    call = session_of(proxy, conv.number)[1].calls["toolu_cc1"]
    assert call.name == "Bash" and call.status == "done"


async def test_claude_code_denied_never_runs_the_tool_and_still_finishes(
    claude_code, anthropic_server, tmp_path
):
    work = work_dir(tmp_path)
    async with running_proxy(anthropic_server, tmp_path, deny=["Bash"]) as proxy:
        code, out = await run_claude(claude_code, proxy, work)
    assert code == 0, out
    # the model was told in the same turn, and Claude Code printed its answer
    assert "finished: Permission denied by rule Bash (--deny)" in out
    assert not (work / "marker.txt").exists()
    statuses = [session_of(proxy, c.number)[1].calls.get("toolu_cc1") for c in proxy.conversations]
    assert [c.status for c in statuses if c is not None] == ["denied"]


async def test_claude_code_edited_runs_the_edited_command(claude_code, anthropic_server, tmp_path):
    work = work_dir(tmp_path)
    async with running_proxy(anthropic_server, tmp_path, breakpoints=["Bash"]) as proxy:
        edit_at_breakpoint(proxy, command="echo edited > edited.txt")
        code, out = await run_claude(claude_code, proxy, work)
    assert code == 0, out
    assert not (work / "marker.txt").exists()
    assert (work / "edited.txt").read_text().strip() == "edited"
    calls = [session_of(proxy, c.number)[1].calls.get("toolu_cc1") for c in proxy.conversations]
    (call,) = [c for c in calls if c is not None]
    assert call.edited_args["command"] == "echo edited > edited.txt" and call.status == "done"
