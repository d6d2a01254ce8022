"""Task-augmented tool calls: a tool that requires a task is called as one, its status
lines are the call's live output, its result is fetched when it is over, a failed task
is an error result, and an abort sends tasks/cancel."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import anyio

from tests.mcp.helpers import SERVERS, calls, mcp_run
from workbench.agent import ToolExecutionUpdateEvent
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app

TASKS = shlex.join([sys.executable, str(SERVERS / "tasks.py")])


def _updates(run: Any) -> list[str]:
    return [
        e.partial_result.content[-1].text.splitlines()[-1]
        for e in run.events
        if isinstance(e, ToolExecutionUpdateEvent)
    ]


async def test_a_tool_that_requires_a_task_runs_as_one() -> None:
    # each step lasts 0.3 s against a poll every 50 ms (the floor), so a loaded machine
    # still sees every status (at 50 ms a step, one poll late missed one)
    turn = calls(("tasks__research", {"topic": "owls", "step": 0.3}), ("tasks__plain", {}))
    async with mcp_run(turn, servers=[TASKS]) as run:
        await run.agent.prompt("go")
        result = run.result("tasks__research")
        assert not result.is_error and result.text == "research on owls: done"
        assert run.result("tasks__plain").text == "plain answer"  # no task: a plain call
    assert _updates(run) == [
        "task task-1: working: starting",
        "task task-1: working: step 1 of 3",
        "task task-1: working: step 2 of 3",
        "task task-1: working: step 3 of 3",
        "task task-1: completed: done",
    ]
    sent = [e.text for e in run.hub.connections[0].wire.entries if "tools/call" in e.text]
    assert any('"task"' in line and "research" in line for line in sent)


async def test_a_failed_task_is_an_error_result() -> None:
    async with mcp_run(calls(("tasks__research", {"topic": "fail"})), servers=[TASKS]) as run:
        await run.agent.prompt("go")
        result = run.result("tasks__research")
        assert result.is_error and result.text == "no sources found"
        assert _updates(run)[-1] == "task task-1: failed: no sources found"


async def test_aborting_sends_tasks_cancel() -> None:
    slow = {"topic": "owls", "step": 5}
    async with mcp_run(calls(("tasks__research", slow)), servers=[TASKS]) as run:

        def abort_on_update(event: Any, _signal: Any = None) -> None:
            if isinstance(event, ToolExecutionUpdateEvent):
                run.agent.abort("enough")

        run.agent.subscribe(abort_on_update)
        with anyio.fail_after(4):  # not the 20 s the task would take
            await run.agent.prompt("go")
        result = run.result("tasks__research")
        assert result.is_error and result.text == (
            "Operation aborted: enough (MCP server tasks was sent tasks/cancel for task "
            "task-1 of research)"
        )
        assert result.details["aborted"] is True
        connection = run.hub.connections[0]
        with anyio.fail_after(5):
            while "tasks: task-1 cancelled" not in connection.stderr_lines():
                await anyio.sleep(0.02)


async def test_the_app_shows_a_tasks_status_as_live_output(tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {
            "name": "tasks",
            "turns": [
                calls(("tasks__research", {"topic": "owls", "step": 0.3})),
                {"text": "done"},
            ],
        }
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            allow=["mcp:tasks"],
            mcp=[TASKS],
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(20):
            while "task task-1: working: step 1 of 3" not in "\n".join(app.inspector.plain_lines()):
                await pilot.pause(0.05)
        with anyio.fail_after(20):
            while app.view_state.run_state != "finished":
                await pilot.pause(0.05)
        await pilot.pause()
        assert "research on owls: done" in app.inspector.section_text("Result")
