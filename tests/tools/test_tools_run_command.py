"""`run_command` on real processes: streaming order, exit codes, timeout, abort."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import workbench.tools.run_command as rc
from workbench.agent import AbortController, AbortSignal, Agent, AgentTool, AgentToolResult
from workbench.agent.events import ToolExecutionUpdateEvent
from workbench.agent.types import ToolResultMessage
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.tools import builtin_tools
from workbench.tools.run_command import CommandFailed


def command_tool(root: Path) -> AgentTool:
    return next(t for t in builtin_tools(root) if t.name == "run_command")


async def run(
    root: Path,
    command: str,
    *,
    timeout: float | None = None,
    signal: AbortSignal | None = None,
    updates: list[AgentToolResult] | None = None,
) -> AgentToolResult:
    tool = command_tool(root)
    params = tool.parameters.model_validate({"command": command, "timeout": timeout})
    sink = updates if updates is not None else []
    return await tool.execute("c1", params, signal or AbortController().signal, sink.append)


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def wait_dead(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await anyio.sleep(0.02)
    return False


def test_run_command_is_sequential_builtin(tmp_path: Path) -> None:
    tool = command_tool(tmp_path)
    assert tool.execution_mode == "sequential" and tool.source == "builtin"


async def test_streams_stdout_and_stderr_in_arrival_order(tmp_path: Path) -> None:
    updates: list[AgentToolResult] = []
    script = "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; sleep 0.2; echo four >&2"
    result = await run(tmp_path, script, updates=updates)
    seen = [(u.details["stream"], line) for u in updates for line in u.details["lines"]]
    assert seen == [("stdout", "one"), ("stderr", "two"), ("stdout", "three"), ("stderr", "four")]
    # each update carries the accumulated output so far
    assert [u.content[0].text for u in updates] == [
        "one",
        "one\ntwo",
        "one\ntwo\nthree",
        "one\ntwo\nthree\nfour",
    ]
    assert result.content[0].text == "one\ntwo\nthree\nfour"
    assert result.details["exit_code"] == 0
    assert (result.details["stdout_lines"], result.details["stderr_lines"]) == (2, 2)


async def test_updates_arrive_while_the_command_runs(tmp_path: Path) -> None:
    stamps: list[float] = []
    started = time.monotonic()

    def on_update(_u: AgentToolResult) -> None:
        stamps.append(time.monotonic() - started)

    tool = command_tool(tmp_path)
    params = tool.parameters(command="echo first; sleep 0.6; echo second")
    await tool.execute("c1", params, AbortController().signal, on_update)
    assert len(stamps) == 2 and stamps[0] < 0.4 <= stamps[1]


async def test_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here")
    result = await run(tmp_path, "pwd; cat marker.txt")
    assert result.content[0].text == f"{tmp_path.resolve()}\nhere"


async def test_non_zero_exit_raises_with_output_tail_and_exit_code(tmp_path: Path) -> None:
    with pytest.raises(CommandFailed) as caught:
        await run(tmp_path, "echo working; echo 'error: apiBaseUrl is missing' >&2; exit 3")
    assert str(caught.value) == (
        "working\nerror: apiBaseUrl is missing\n\nCommand exited with code 3"
    )
    assert caught.value.details["exit_code"] == 3


async def test_long_output_keeps_head_and_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rc, "MAX_LINES", 100)
    monkeypatch.setattr(rc, "HEAD_LINES", 10)
    result = await run(tmp_path, "seq 1 5000")
    lines = result.content[0].text.splitlines()
    assert lines[:10] == [str(i) for i in range(1, 11)]
    assert lines[10] == (
        "[... 4890 lines left out: the output was 5000 lines, 23893 bytes; "
        "showing the first 10 and the last 100 ...]"
    )
    assert lines[11:] == [str(i) for i in range(4901, 5001)]
    assert result.details["truncated"] is True and result.details["total_lines"] == 5000


async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(CommandFailed) as caught:
        await run(tmp_path, "sleep 30 & echo $! > child.pid; echo started; wait", timeout=0.5)
    assert time.monotonic() - started < 3
    assert str(caught.value).endswith("Command timed out after 0.5 seconds and was killed")
    assert caught.value.details["timed_out"] is True
    assert "started" in str(caught.value)
    assert await wait_dead(int((tmp_path / "child.pid").read_text()))


async def test_abort_kills_the_whole_process_group(tmp_path: Path) -> None:
    controller = AbortController()
    updates: list[AgentToolResult] = []
    outcome: list[BaseException] = []

    async def runner() -> None:
        try:
            await run(
                tmp_path,
                "sleep 30 & echo $! > child.pid; echo up; wait",
                signal=controller.signal,
                updates=updates,
            )
        except CommandFailed as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(runner)
        while not updates:
            await anyio.sleep(0.01)
        started = time.monotonic()
        controller.abort()
    assert time.monotonic() - started < 2
    assert str(outcome[0]).endswith("Command aborted")
    assert outcome[0].details["aborted"] is True  # type: ignore[attr-defined]
    assert await wait_dead(int((tmp_path / "child.pid").read_text()))


async def test_abort_sends_sigterm_to_every_process_first(tmp_path: Path) -> None:
    """Children get SIGTERM (a chance to clean up), not just the shell."""
    controller = AbortController()
    child = (
        'sh -c \'trap "echo cleaned > child_term.txt; exit 0" TERM; '
        "echo ready > ready.txt; while true; do sleep 0.05; done' & wait"
    )
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def runner() -> None:
                with pytest.raises(CommandFailed):
                    await run(tmp_path, child, signal=controller.signal)

            tg.start_soon(runner)
            while not (tmp_path / "ready.txt").exists():
                await anyio.sleep(0.01)
            controller.abort()
    assert (tmp_path / "child_term.txt").read_text() == "cleaned\n"


async def test_a_process_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    controller = AbortController()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def runner() -> None:
                with pytest.raises(CommandFailed):
                    await run(
                        tmp_path,
                        "trap '' TERM; echo $$ > sh.pid; sleep 30; sleep 30",
                        signal=controller.signal,
                    )

            tg.start_soon(runner)
            while not (tmp_path / "sh.pid").exists():
                await anyio.sleep(0.01)
            controller.abort()
    assert await wait_dead(int((tmp_path / "sh.pid").read_text()))


async def test_background_process_holding_the_pipes_is_ended(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await run(tmp_path, "(sleep 30 & echo $! > bg.pid); echo done")
    assert time.monotonic() - started < 3
    assert result.content[0].text == "done" and result.details["background_killed"] is True
    assert await wait_dead(int((tmp_path / "bg.pid").read_text()))


SCENARIO: dict[str, Any] = {
    "name": "commands",
    "turns": [
        {
            "tool_calls": [
                {"name": "run_command", "arguments": {"command": "echo a; echo b >&2; exit 2"}},
            ]
        },
        {"text": "done"},
    ],
}


async def test_through_the_loop_the_failure_is_an_error_result_with_exit_code(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(Scenario.model_validate(SCENARIO))
    agent = Agent(stream_fn=provider, model=provider.model, tools=builtin_tools(tmp_path))
    updates: list[ToolExecutionUpdateEvent] = []
    agent.subscribe(lambda e, _s: updates.append(e) if e.type == "tool_execution_update" else None)
    await agent.prompt("go")
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error and result.text == "a\nb\n\nCommand exited with code 2"
    assert result.details["exit_code"] == 2
    assert [u.partial_result.details["lines"] for u in updates] == [["a"], ["b"]]
    assert os.getpid() > 0
