"""The view fold on its own: real runs of the real runtime folded into what is shown."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from workbench.agent import ToolResultMessage
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.view.fold import ViewState, fold
from workbench.workspace import seed


def demo_runtime(tmp_path: Path, **options):  # type: ignore[no-untyped-def]
    scenario = Scenario.load("demo")
    seed(tmp_path, scenario.workspace_files)
    return build_runtime(RunOptions(scenario=scenario, workspace=tmp_path, pace=math.inf, **options))


async def run_and_fold(runtime, prompt: str):  # type: ignore[no-untyped-def]
    events: list = []
    state = ViewState()

    def listen(event, _signal=None):  # type: ignore[no-untyped-def]
        events.append(event)
        state.apply(event)

    runtime.agent.subscribe(listen)
    await runtime.agent.prompt(prompt)
    return state, events


async def test_demo_folds_into_turns_cards_and_stages(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="all")
    state, events = await run_and_fold(runtime, runtime.prompt)
    assert state.run_state == "finished"
    assert state.turn == 5 and len(state.turns) == 5
    stages = {c.id: c.stage for c in state.calls.values()}
    assert stages == {
        "call_1_1": "done", "call_1_2": "done", "call_1_3": "error", "call_1_4": "invalid",
        "call_1_5": "invalid", "call_2_1": "invalid", "call_3_1": "done", "call_4_1": "done",
        "call_4_2": "done",
    }
    assert state.calls["call_1_4"].failed_stage == "parse"
    assert state.calls["call_1_5"].failed_stage == "lookup"
    invalid = state.calls["call_2_1"]
    assert invalid.failed_stage == "validate" and "edits: Input should be a valid list" in invalid.arg_error
    flat = state.calls["call_3_1"]
    assert "old_text" in flat.parsed and "edits" not in flat.parsed
    assert "edits" in flat.prepared and "old_text" not in flat.prepared
    assert flat.validated["edits"][0]["new_text"].endswith('"http://127.0.0.1:11434/v1",')
    command = state.calls["call_4_1"]
    assert command.update_count >= 1 and "OK: apiBaseUrl" in command.output
    assert [p for p, _ in command.phases][:2] == ["preflight", "executing"]
    assert command.decision.decided_by == "policy"
    assert state.input_tokens > 0 and state.output_tokens > 0
    kinds = [i.kind for i in state.items]
    assert kinds == ["user", "assistant", "assistant", "assistant", "assistant", "assistant"]
    assert state.items[-1].text.startswith("**Done.**")
    # folding the recorded events again gives the same picture
    again = fold(events)
    assert {c.id: c.stage for c in again.calls.values()} == stages
    assert [i.text for i in again.items] == [i.text for i in state.items]


async def test_denied_call_is_denied_and_the_model_hears_why(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="rules")
    state, _ = await run_and_fold(runtime, runtime.prompt)
    edit = state.calls["call_3_1"]
    assert edit.stage == "denied" and edit.decision.decided_by == "policy"
    assert "needs approval" in edit.result_text
    assert state.items[-1].text.startswith("I did not change config.json")


async def test_abort_marks_running_and_skipped_calls_aborted(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="all")
    events: list = []
    state = ViewState()

    def listen(event, _signal=None):  # type: ignore[no-untyped-def]
        events.append(event)
        state.apply(event)
        if event.type == "tool_execution_update" and event.tool_call_id == "call_4_1":
            runtime.agent.abort("stop")

    runtime.agent.subscribe(listen)
    with anyio.fail_after(20):
        await runtime.agent.prompt(runtime.prompt)
    assert state.run_state == "aborted"
    assert state.calls["call_4_1"].stage == "aborted"
    assert state.calls["call_4_2"].stage == "aborted"
    answered = {m.tool_call_id for m in runtime.agent.state.messages if isinstance(m, ToolResultMessage)}
    assert set(state.calls) == answered
    assert not state.pending_calls


async def test_pause_and_resume_restore_the_stage(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="all", breakpoints=["read_file"])
    state = ViewState()
    seen: list[str] = []

    async def listen(event, _signal=None):  # type: ignore[no-untyped-def]
        state.apply(event)
        if event.type == "step_paused":
            seen.append(state.calls[event.tool_call_id].stage)
            runtime.stepper.resume(event.pause_id, "continue")

    runtime.agent.subscribe(listen)
    with anyio.fail_after(20):
        await runtime.agent.prompt(runtime.prompt)
    assert seen and set(seen) == {"paused"}
    assert state.pause is None and state.run_state == "finished"
    assert state.calls["call_1_2"].stage == "done"
    assert ("paused" in [p for p, _ in state.calls["call_1_2"].phases])


@pytest.mark.parametrize(
    "module",
    ["workbench", "workbench.agent", "workbench.view.fold", "workbench.runtime", "workbench.providers.openai",
     "workbench.permissions", "workbench.stepper", "workbench.cli.headless", "tools"],
)
def test_core_never_loads_textual(module: str) -> None:
    probe = f"import {module}, sys; print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
