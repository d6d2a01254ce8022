"""Where the time went: per turn and for the whole run, from the fold alone.

Model time is from the turn's start to the end of the assistant's reply, less any
pause before the request; tool time is the span during which any of the turn's
calls was executing; approval and pause time add up each call's waits (calls wait
one at a time in preflight, so these do not overlap within a turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.view.fold import ViewState
from workbench.view.records import ToolCallRecord, TurnRecord


@dataclass
class TimeSplit:
    model_ms: float = 0.0
    tools_ms: float = 0.0
    approval_ms: float = 0.0
    paused_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0

    def add(self, other: TimeSplit) -> None:
        self.model_ms += other.model_ms
        self.tools_ms += other.tools_ms
        self.approval_ms += other.approval_ms
        self.paused_ms += other.paused_ms
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.calls += other.calls


@dataclass
class RunSummary:
    turns: list[tuple[int, TimeSplit]] = field(default_factory=list)
    total: TimeSplit = field(default_factory=TimeSplit)


def phase_durations(record: ToolCallRecord, now: float) -> dict[str, float]:
    """Milliseconds the call spent in each phase (an unfinished phase runs to `now`)."""
    out: dict[str, float] = {}
    phases = record.phases
    for i, (name, start) in enumerate(phases):
        if name == "end":
            break
        end = phases[i + 1][1] if i + 1 < len(phases) else (record.ended_at or now)
        out[name] = out.get(name, 0.0) + max(0.0, end - start)
    return out


def phase_spans(record: ToolCallRecord, now: float) -> list[tuple[str, float, float]]:
    """(phase, start, end) for each phase of the call, in order."""
    spans = []
    phases = record.phases
    for i, (name, start) in enumerate(phases):
        if name == "end":
            break
        end = phases[i + 1][1] if i + 1 < len(phases) else (record.ended_at or now)
        spans.append((name, start, end))
    return spans


def turn_split(state: ViewState, turn: TurnRecord, now: float) -> TimeSplit:
    split = TimeSplit(input_tokens=turn.input_tokens, output_tokens=turn.output_tokens)
    if turn.model_ended_at is not None:
        split.model_ms = max(0.0, turn.model_ended_at - turn.started_at - turn.paused_ms)
    elif turn.ended_at is None:
        split.model_ms = max(0.0, now - turn.started_at - turn.paused_ms)
    split.paused_ms = turn.paused_ms
    executing: list[tuple[float, float]] = []
    for call_id in turn.tool_call_ids:
        record = state.calls.get(call_id)
        if record is None:
            continue
        split.calls += 1
        durations = phase_durations(record, now)
        split.approval_ms += durations.get("approval", 0.0)
        split.paused_ms += durations.get("paused", 0.0)
        executing += [(a, b) for name, a, b in phase_spans(record, now) if name in ("executing", "after_hook")]
    split.tools_ms = _union_length(executing)
    return split


def summarize(state: ViewState, now: float | None = None) -> RunSummary:
    now = state.last_timestamp if now is None else now
    summary = RunSummary()
    for turn in state.turns:
        split = turn_split(state, turn, now)
        summary.turns.append((turn.index, split))
        summary.total.add(split)
    return summary


def _union_length(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total
