"""Where the time went: the run summary and phase arithmetic, from folded events."""

from __future__ import annotations

from workbench.view.fold import ViewState
from workbench.view.records import ToolCallRecord, TurnRecord
from workbench.view.summary import phase_durations, summarize


def call(call_id: str, phases: list[tuple[str, float]], ended: float) -> ToolCallRecord:
    r = ToolCallRecord(call_id, "t", 1, 0, status="done")
    r.started_at, r.ended_at = phases[0][1], ended
    for phase, start in [*phases, ("end", ended)]:
        r.note(start, phase, phase=phase)
    return r


def test_phase_durations_add_up_each_phase() -> None:
    r = call("a", [("preflight", 0), ("approval", 10), ("preflight", 110), ("executing", 120)], 620)
    assert phase_durations(r, now=1000) == {"preflight": 20, "approval": 100, "executing": 500}


def test_summary_splits_model_tools_approval_and_pause_per_turn() -> None:
    state = ViewState()
    state.turns = [
        TurnRecord(
            1,
            started_at=0,
            ended_at=900,
            model_started_at=50,
            model_ended_at=200,
            paused_ms=30,
            input_tokens=10,
            output_tokens=5,
            tool_call_ids=["a", "b"],
        ),
        TurnRecord(
            2,
            started_at=900,
            ended_at=1000,
            model_started_at=920,
            model_ended_at=1000,
            input_tokens=20,
            output_tokens=2,
        ),
    ]
    state.calls = {
        "a": call(
            "a",
            [("preflight", 200), ("approval", 210), ("preflight", 400), ("executing", 410)],
            800,
        ),
        "b": call("b", [("preflight", 400), ("executing", 410)], 600),
    }
    summary = summarize(state, now=1000)
    first = dict(summary.turns)[1]
    assert first.model_ms == 170  # 200 - 0 - 30 paused before the request
    assert first.tools_ms == 390  # 410..800, the two executions overlap
    assert first.approval_ms == 190 and first.paused_ms == 30 and first.calls == 2
    total = summary.total
    assert (total.input_tokens, total.output_tokens) == (30, 7)
    assert total.model_ms == 170 + 100
