"""The view fold on its own: real runs of the real runtime folded into what is shown."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from workbench.agent import (
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    ToolCall,
    ToolResultMessage,
    tool,
)
from workbench.agent.events import MessageStartEvent, MessageUpdateEvent
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.scratch import seed
from workbench.view.fold import ViewState, fold


def demo_runtime(tmp_path: Path, **options):  # type: ignore[no-untyped-def]
    scenario = Scenario.load("demo")
    seed(tmp_path, scenario.workspace_files)
    return build_runtime(
        RunOptions(scenario=scenario, workspace=tmp_path, pace=math.inf, **options)
    )


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
    stages = {c.id: c.status for c in state.calls.values()}
    assert stages == {
        "call_1_1": "done",
        "call_1_2": "done",
        "call_1_3": "error",
        "call_1_4": "invalid",
        "call_1_5": "invalid",
        "call_2_1": "invalid",
        "call_3_1": "done",
        "call_4_1": "done",
        "call_4_2": "done",
    }
    assert state.calls["call_1_4"].failed_stage == "parse"
    assert state.calls["call_1_5"].failed_stage == "lookup"
    invalid = state.calls["call_2_1"]
    assert (
        invalid.failed_stage == "validate"
        and "edits: Input should be a valid list" in invalid.arg_error
    )
    flat = state.calls["call_3_1"]
    assert "old_text" in flat.parsed and "edits" not in flat.parsed
    assert "edits" in flat.prepared and "old_text" not in flat.prepared
    assert flat.validated["edits"][0]["new_text"].endswith('"http://127.0.0.1:11434/v1",')
    command = state.calls["call_4_1"]
    assert command.update_count >= 1 and "OK: apiBaseUrl" in command.output
    assert [p for p, _ in command.phases][:3] == ["preflight", "queued", "executing"]
    assert command.decision.decided_by == "policy"
    assert state.input_tokens > 0 and state.output_tokens > 0
    kinds = [i.kind for i in state.items]
    assert kinds == ["user", "assistant", "assistant", "assistant", "assistant", "assistant"]
    assert state.items[-1].text.startswith("**Done.**")
    # folding the recorded events again gives the same picture
    again = fold(events)
    assert {c.id: c.status for c in again.calls.values()} == stages
    assert [i.text for i in again.items] == [i.text for i in state.items]


async def test_denied_call_is_denied_and_the_model_hears_why(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="rules")
    state, _ = await run_and_fold(runtime, runtime.prompt)
    edit = state.calls["call_3_1"]
    assert edit.status == "denied" and edit.decision.decided_by == "policy"
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
    assert state.calls["call_4_1"].status == "aborted"
    assert state.calls["call_4_2"].status == "aborted"
    answered = {
        m.tool_call_id for m in runtime.agent.state.messages if isinstance(m, ToolResultMessage)
    }
    assert set(state.calls) == answered
    assert not state.pending_calls


async def test_pause_and_resume_restore_the_stage(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="all", breakpoints=["read_file"])
    state = ViewState()
    seen: list[str] = []

    async def listen(event, _signal=None):  # type: ignore[no-untyped-def]
        state.apply(event)
        if event.type == "step_paused":
            seen.append(state.calls[event.tool_call_id].status)
            runtime.stepper.resume(event.pause_id, "continue")

    runtime.agent.subscribe(listen)
    with anyio.fail_after(20):
        await runtime.agent.prompt(runtime.prompt)
    assert seen and set(seen) == {"paused"}
    assert state.pause is None and state.run_state == "finished"
    assert state.calls["call_1_2"].status == "done"
    assert "paused" in [p for p, _ in state.calls["call_1_2"].phases]


async def test_a_call_s_history_and_phases_follow_its_approval(tmp_path: Path) -> None:
    from workbench.permissions import PermissionAnswer

    runtime = demo_runtime(tmp_path)  # approve="ask": every call that writes asks
    state = ViewState()

    async def listen(event, _signal=None):  # type: ignore[no-untyped-def]
        state.apply(event)
        if event.type == "permission_request":
            runtime.gate.decide(event.request_id, PermissionAnswer.deny("not now"))

    runtime.agent.subscribe(listen)
    with anyio.fail_after(20):
        await runtime.agent.prompt(runtime.prompt)
    edit = state.calls["call_3_1"]
    assert [p for p, _ in edit.phases] == ["preflight", "queued", "approval", "queued", "end"]
    labels = [label for _, label, _ in edit.events]
    assert labels == [
        "preflight started",
        "arguments validated",
        "permission requested",
        "deny (user)",
        "ended with error",
        "result sent to the model",
    ]
    assert edit.events[3][2].endswith("not now")
    times = [t for t, _, _ in edit.events]
    assert times == sorted(times) and dict(edit.phases)["approval"] == times[2]
    read = state.calls["call_1_1"]  # allowed by a rule: no request, no approval phase
    assert [p for p, _ in read.phases] == [
        "preflight",
        "queued",
        "executing",
        "end",
    ]  # no after hook: @error reviews results


@pytest.mark.parametrize(
    "module",
    [
        "workbench",
        "workbench.agent",
        "workbench.view.fold",
        "workbench.runtime",
        "workbench.providers.openai",
        "workbench.permissions",
        "workbench.stepper",
        "workbench.cli.headless",
        "tools",
    ],
)
def test_core_never_loads_textual(module: str) -> None:
    probe = (
        f"import {module}, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- folding many events at once -----------------------------------------------------


async def mixed_run_events(tmp_path: Path) -> list:
    """A run with thinking, text, streamed tool-call arguments, and parallel calls whose
    `on_update`s interleave with each other's and with other events."""

    @tool
    async def ticker(name: str, on_update) -> str:  # type: ignore[no-untyped-def]
        """Reports twice in a row, three times, yielding in between so parallel calls
        interleave."""
        for i in range(3):
            on_update(AgentToolResult.text(f"{name}: {i}…"))
            on_update(AgentToolResult.text(f"{name}: {i}"))
            await anyio.sleep(0)
        return f"{name} done"

    scenario = Scenario.model_validate(
        {
            "name": "mixed",
            "turns": [
                {
                    "thinking": "Two tickers, side by side. " * 8,
                    "text": "Starting **both** tickers now. " * 10,
                    "tool_calls": [
                        {"name": "ticker", "arguments": {"name": "a"}},
                        {"name": "ticker", "arguments": {"name": "b"}},
                        {"name": "nope", "arguments": {}},
                    ],
                },
                {"text": "Both reported. " * 6},
            ],
        }
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario, workspace=tmp_path, pace=math.inf, tools=[ticker], allow=["ticker"]
        )
    )
    events: list = []
    runtime.agent.subscribe(lambda event, _signal=None: events.append(event))
    with anyio.fail_after(20):
        await runtime.agent.prompt("go")
    return events


def one_at_a_time(events: list) -> ViewState:
    state = ViewState()
    for event in events:
        state.apply(event)
    return state


async def test_folding_in_batches_makes_exactly_the_state_of_one_at_a_time(tmp_path: Path) -> None:
    events = await mixed_run_events(tmp_path)
    kinds = [e.type for e in events]
    updates = [e.tool_call_id for e in events if e.type == "tool_execution_update"]
    assert updates[:4] == ["call_1_1", "call_1_1", "call_1_2", "call_1_2"], "runs, interleaved"
    assert "thinking_delta" in {
        e.assistant_message_event.type for e in events if e.type == "message_update"
    }
    expected = one_at_a_time(events)
    assert (
        expected.calls["call_1_2"].output == "b: 2" and expected.calls["call_1_2"].update_count == 6
    )
    assert expected.calls["call_1_3"].status == "invalid"
    for size in (1, 2, 3, 5, 16, 64, len(events)):
        state = ViewState()
        for start in range(0, len(events), size):
            state.apply_all(events[start : start + size])
        assert state == expected, f"batches of {size}"
    assert fold(iter(events)) == expected
    assert len(kinds) == expected.event_count


async def test_the_demo_folds_the_same_in_one_batch_as_one_at_a_time(tmp_path: Path) -> None:
    runtime = demo_runtime(tmp_path, approve="all")
    state, events = await run_and_fold(runtime, runtime.prompt)
    assert fold(events) == state
    assert state.items[-1].text.startswith("**Done.**")


async def test_an_event_the_fold_fails_on_is_skipped_and_the_rest_still_fold(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events = await mixed_run_events(tmp_path)
    at = next(i for i, e in enumerate(events) if e.type == "tool_execution_update")
    at += 1  # the second of the call's first two updates (the one whose output counts)
    assert events[at].tool_call_id == "call_1_1"
    broken = events[at].model_copy(update={"partial_result": None})  # not an AgentToolResult
    state = ViewState()
    state.apply_all([*events[:at], broken, *events[at + 1 :]])
    assert "the view fold failed on tool_execution_update" in caplog.text
    assert state.run_state == "finished"
    assert state.calls["call_1_1"].output == "a: 2"
    assert state.items[-1].text == "Both reported. " * 6
    assert state.event_count == len(events)  # every event counts, the failed one too
    assert state.last_timestamp == events[-1].timestamp


def test_interleaved_argument_deltas_of_parallel_calls_fold_to_each_calls_own_raw() -> None:
    """Providers may interleave the argument deltas of parallel calls (OpenAI's stream
    says which call by index): only deltas to one block in a row fold together."""
    calls = [ToolCall(id="c1", name="read_file"), ToolCall(id="c2", name="list_dir")]

    def update(kind: str, index: int, delta: str | None = None) -> MessageUpdateEvent:
        partial = AssistantMessage(content=calls[: index + 1])
        ame = AssistantMessageEvent(type=kind, content_index=index, delta=delta, partial=partial)
        return MessageUpdateEvent(message=partial, assistant_message_event=ame)

    deltas = [(0, '{"pa'), (0, 'th": "a"'), (1, '{"path"'), (0, "}"), (1, ': "b"}')]
    events = [
        MessageStartEvent(message=AssistantMessage()),
        update("toolcall_start", 0),
        update("toolcall_start", 1),
        *(update("toolcall_delta", index, delta) for index, delta in deltas),
    ]
    expected = one_at_a_time(events)
    assert (
        expected.calls["c1"].raw == '{"path": "a"}' and expected.calls["c2"].raw == '{"path": "b"}'
    )
    assert fold(events) == expected


def test_the_fold_reads_events_by_their_class_and_only_counts_anything_else() -> None:
    from types import SimpleNamespace

    from workbench.agent.events import AgentStartEvent

    state = ViewState()
    state.apply(SimpleNamespace(type="agent_start", timestamp=5.0))  # named like one, not one
    assert (state.runs, state.event_count, state.last_timestamp) == (0, 1, 5.0)
    state.apply_all([SimpleNamespace(type="agent_start", timestamp=6.0), AgentStartEvent()])
    assert (state.runs, state.run_state, state.event_count) == (1, "streaming", 3)
