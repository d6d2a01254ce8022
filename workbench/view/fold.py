"""The one fold from bus events to what is shown: `state.apply(event)`, or
`state.apply_all(events)` for many at once (the same state, in fewer steps).

The live app, the headless printer's summary and replay all use this fold, so the
state after events 1..N is the same wherever it is computed. The fold reads only
the events (never the clock, never the agent), and builds streamed text from
deltas, not from the live partial message, so a recorded stream folds to exactly
what the live screen showed.

Each event class has one handler (`HANDLERS`): a run's turns, messages, the wire
and notices in `fold_run`, a tool call's life in `fold_calls`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.agent.events import (
    AgentEndEvent,
    AgentStartEvent,
    HandCallEndEvent,
    HandCallEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolArgumentsEvent,
    ToolExecutionEndEvent,
    ToolExecutionPhaseEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from workbench.agent.stream_apply import DELTAS
from workbench.bus_events import (
    AcpCallUpdateEvent,
    AcpNoticeEvent,
    McpSamplingEvent,
    McpToolsChangedEvent,
    PermissionDecisionEvent,
    PermissionRequestEvent,
    ProviderRequestEvent,
    ProviderResponseEvent,
    ProxyNoticeEvent,
    ResponseReleasedEvent,
    StepModeEvent,
    StepPausedEvent,
    StepResumedEvent,
)
from workbench.view import fold_calls, fold_run
from workbench.view.records import (
    NetworkRecord,
    RunState,
    TimelineItem,
    ToolCallRecord,
    TurnRecord,
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class DeltaRun:
    """`count` streamed deltas of one kind to one block, joined: what a session reader
    hands the fold in place of the delta events themselves (`sessions.log`). It folds,
    and counts, exactly as those events would."""

    kind: str
    content_index: int
    text: str
    count: int
    timestamp: float
    """The last delta's."""
    type: str = "delta_run"


@dataclass
class ViewState:
    items: list[TimelineItem] = field(default_factory=list)
    calls: dict[str, ToolCallRecord] = field(default_factory=dict)
    """Every tool call by id, in the order the model asked for them."""
    turns: list[TurnRecord] = field(default_factory=list)
    network: dict[str, NetworkRecord] = field(default_factory=dict)
    run_state: RunState = "idle"
    runs: int = 0
    error: str | None = None
    pending_requests: dict[str, str] = field(default_factory=dict)
    """Permission requests awaiting a decision: request id -> tool call id."""
    pause: Any = None
    """The current StepPausedEvent, or None."""
    step_mode: bool = False
    breakpoints: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    replies_without_usage: int = 0
    """Replies (not failed or aborted) whose server sent no usage: their tokens are
    unknown, not zero."""
    event_count: int = 0
    last_timestamp: float = 0.0
    latest_call_id: str | None = None
    """The call that most recently started its preflight."""
    reached_back: bool = False
    """An event changed a call or a request of an earlier turn (a model reusing a call
    id does it): the earlier turns' objects are not final (see `view.checkpoint`)."""

    # The fold's own bookkeeping (read by the handlers, not by what draws the state).
    streaming_item: TimelineItem | None = None
    """The assistant item being streamed."""
    started: dict[str, None] = field(default_factory=dict)
    """Ids of calls that started and have not ended (an ordered set)."""
    in_run: bool = False
    replied_this_run: bool = False
    state_before_hand: RunState = "idle"
    """The run state a call by hand returns to when it ends."""

    # -- the fold ------------------------------------------------------------------

    def apply(self, event: Any) -> None:
        """Fold one event into the state."""
        self.event_count += 1
        self.last_timestamp = event.timestamp
        handler = HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def apply_all(self, events: Sequence[Any]) -> None:
        """Fold `events` in order: exactly the state `apply` on each one would make.

        A run of deltas to one block, or of `on_update`s from one call, folds in one
        step: the deltas are joined once, and only the last update's output is kept
        (each one replaces the one before). Most events of a busy run come in such
        runs, so a batch costs a fraction of folding its events one at a time.

        An event the fold fails on is logged and skipped, and the rest still fold,
        as when the bus calls a listener that raises.
        """
        n = len(events)
        if not n:
            return
        handlers = HANDLERS
        i = 0
        while i < n:
            try:
                while i < n:
                    event = events[i]
                    kind = type(event)
                    if kind is MessageUpdateEvent:
                        i = self._message_updates(events, i, n)
                    elif kind is ToolExecutionUpdateEvent:
                        i = self._tool_updates(events, i, n)
                    else:
                        handler = handlers.get(kind)
                        if handler is not None:
                            handler(self, event)
                        i += 1
            except Exception:  # noqa: BLE001 - one bad event must not cost the rest
                log.exception("the view fold failed on %s", getattr(events[i], "type", events[i]))
                i += 1
        self.event_count += n  # every event counts, as in `apply`, even one that failed
        self.last_timestamp = events[-1].timestamp

    def _message_updates(self, events: Sequence[Any], i: int, n: int) -> int:
        """Fold the run of deltas to one block starting at `events[i]`; returns its end."""
        ame = events[i].assistant_message_event
        kind = ame.type
        if kind not in DELTAS:
            fold_run.message_update(self, events[i])
            return i + 1
        index = ame.content_index
        deltas = [ame.delta or ""]
        j = i + 1
        while j < n:
            event = events[j]
            if type(event) is not MessageUpdateEvent:
                break
            ame = event.assistant_message_event
            if ame.type != kind or ame.content_index != index:
                break
            deltas.append(ame.delta or "")
            j += 1
        fold_run.deltas(self, kind, index, "".join(deltas), j - i)
        return j

    def _tool_updates(self, events: Sequence[Any], i: int, n: int) -> int:
        """Fold the run of `on_update`s from one call starting at `events[i]`."""
        call_id = events[i].tool_call_id
        unrecorded = events[i].unrecorded
        j = i + 1
        while j < n:
            event = events[j]
            if type(event) is not ToolExecutionUpdateEvent or event.tool_call_id != call_id:
                break
            unrecorded += event.unrecorded
            j += 1
        last = events[j - 1]
        fold_calls.execution_update(self, last, count=j - i + unrecorded - last.unrecorded)
        self.calls[call_id].unrecorded += unrecorded - last.unrecorded
        return j

    # -- what the state says ---------------------------------------------------------

    @property
    def turn(self) -> int:
        return len(self.turns)

    def batch_of(self, record: ToolCallRecord) -> list[ToolCallRecord]:
        """Every call the same assistant message asked for, in order (the call's batch)."""
        if record.by_hand or not 0 < record.turn <= len(self.turns):
            return [record]
        return [self.calls[i] for i in self.turns[record.turn - 1].tool_call_ids if i in self.calls]

    @property
    def pending_calls(self) -> list[ToolCallRecord]:
        """Calls that started and have not ended, in the order they started."""
        return [self.calls[i] for i in self.started if not self.calls[i].finished]


def _delta_run(state: ViewState, e: DeltaRun) -> None:
    fold_run.deltas(state, e.kind, e.content_index, e.text, e.count)
    state.event_count += e.count - 1  # the fold counts the run as one event


HANDLERS: dict[type, Callable[[ViewState, Any], None]] = {
    AgentStartEvent: fold_run.agent_start,
    AgentEndEvent: fold_run.agent_end,
    TurnStartEvent: fold_run.turn_start,
    TurnEndEvent: fold_run.turn_end,
    MessageStartEvent: fold_run.message_start,
    MessageUpdateEvent: fold_run.message_update,
    MessageEndEvent: fold_run.message_end,
    DeltaRun: _delta_run,
    ProviderRequestEvent: fold_run.provider_request,
    ProviderResponseEvent: fold_run.provider_response,
    ResponseReleasedEvent: fold_run.response_released,
    McpToolsChangedEvent: fold_run.mcp_tools_changed,
    McpSamplingEvent: fold_run.mcp_sampling,
    AcpNoticeEvent: fold_run.acp_notice,
    ProxyNoticeEvent: fold_run.proxy_notice,
    AcpCallUpdateEvent: fold_calls.acp_call_update,
    ToolExecutionStartEvent: fold_calls.execution_start,
    ToolArgumentsEvent: fold_calls.arguments,
    ToolExecutionPhaseEvent: fold_calls.execution_phase,
    ToolExecutionUpdateEvent: fold_calls.execution_update,
    ToolExecutionEndEvent: fold_calls.execution_end,
    HandCallEvent: fold_calls.hand_call,
    HandCallEndEvent: fold_calls.hand_call_end,
    PermissionRequestEvent: fold_calls.permission_request,
    PermissionDecisionEvent: fold_calls.permission_decision,
    StepModeEvent: fold_calls.step_mode,
    StepPausedEvent: fold_calls.step_paused,
    StepResumedEvent: fold_calls.step_resumed,
}
"""The handler of each event class the fold reads; other events only count."""


def fold(events: Iterable[Any], state: ViewState | None = None) -> ViewState:
    """Fold `events` into `state` (a fresh one by default) and return it."""
    state = state or ViewState()
    state.apply_all(events if isinstance(events, (list, tuple)) else list(events))
    return state
