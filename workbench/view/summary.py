"""Where the time went: per turn and for the whole run, from the fold alone.

Model time is from the turn's start to the end of the assistant's reply, less any
pause before the request; tool time is the span during which any of the turn's
calls was executing; approval and pause time add up each call's waits (calls wait
one at a time in preflight, so these do not overlap within a turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.pricing import PriceTable, add_costs
from workbench.view.fold import ViewState
from workbench.view.records import CallPhase, ToolCallRecord, TurnRecord


@dataclass
class TimeSplit:
    model_ms: float = 0.0
    tools_ms: float = 0.0
    approval_ms: float = 0.0
    paused_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost: float | None = 0.0
    """US dollars (None: a reply's model has no price)."""

    def add(self, other: TimeSplit) -> None:
        self.model_ms += other.model_ms
        self.tools_ms += other.tools_ms
        self.approval_ms += other.approval_ms
        self.paused_ms += other.paused_ms
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.calls += other.calls
        self.cost = add_costs(self.cost, other.cost)


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


def phase_spans(record: ToolCallRecord, now: float) -> list[tuple[CallPhase, float, float]]:
    """(phase, start, end) for each phase of the call, in order."""
    spans: list[tuple[CallPhase, float, float]] = []
    phases = record.phases
    for i, (name, start) in enumerate(phases):
        if name == "end":
            break
        end = phases[i + 1][1] if i + 1 < len(phases) else (record.ended_at or now)
        spans.append((name, start, end))
    return spans


@dataclass
class Costs:
    """What the latest turn, the current run and the whole session cost (None: unknown)."""

    turn: float | None = 0.0
    run: float | None = 0.0
    session: float | None = 0.0


class CostMeter:
    """`Costs` of a growing `ViewState`, adding each turn once it is behind the latest
    (so a refresh costs the same at turn 1,000 as at turn 1)."""

    def __init__(self, prices: PriceTable) -> None:
        self.prices = prices
        self._state: ViewState | None = None
        self._counted = 0
        """Turns already added to the sums below (all but the latest, at most)."""
        self._session: float | None = 0.0
        self._runs: dict[int, float | None] = {}

    def costs(self, state: ViewState) -> Costs:
        if state is not self._state:  # a new session: start over
            self._state, self._counted, self._session, self._runs = state, 0, 0.0, {}
        turns = state.turns
        for turn in turns[self._counted : len(turns) - 1]:
            cost = self.prices.total(turn.replies)
            self._session = add_costs(self._session, cost)
            self._runs[turn.run] = add_costs(self._runs.get(turn.run, 0.0), cost)
        self._counted = max(self._counted, len(turns) - 1)
        if not turns:
            return Costs()
        last = turns[-1]
        cost = self.prices.total(last.replies)
        run = self._runs.get(state.runs, 0.0)
        if last.run == state.runs:
            run = add_costs(run, cost)
        return Costs(turn=cost, run=run, session=add_costs(self._session, cost))


def turn_split(
    state: ViewState, turn: TurnRecord, now: float, prices: PriceTable | None = None
) -> TimeSplit:
    split = TimeSplit(input_tokens=turn.input_tokens, output_tokens=turn.output_tokens)
    split.cost = (prices or PriceTable()).total(turn.replies)
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
        executing += [
            (a, b) for name, a, b in phase_spans(record, now) if name in ("executing", "after_hook")
        ]
    split.tools_ms = _union_length(executing)
    return split


def summarize(
    state: ViewState, now: float | None = None, prices: PriceTable | None = None
) -> RunSummary:
    now = state.last_timestamp if now is None else now
    prices = prices or PriceTable()
    summary = RunSummary()
    for turn in state.turns:
        split = turn_split(state, turn, now, prices)
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
