"""The one fold from bus events to what is shown: `state.apply(event)`, or
`state.apply_all(events)` for many at once (the same state, in fewer steps).

The live app, the headless printer's summary and replay all use this fold, so the
state after events 1..N is the same wherever it is computed. The fold reads only
the events (never the clock, never the agent), and builds streamed text from
deltas, not from the live partial message, so a recorded stream folds to exactly
what the live screen showed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.agent import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from workbench.agent.types import result_text, text_of
from workbench.view.records import (
    Block,
    NetworkRecord,
    RunState,
    TimelineItem,
    ToolCallRecord,
    TurnRecord,
)

log = logging.getLogger(__name__)

_DELTAS = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})


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
    event_count: int = 0
    last_timestamp: float = 0.0
    _assistant: TimelineItem | None = None
    _started: dict[str, None] = field(default_factory=dict)
    """Ids of calls that started and have not ended (an ordered set)."""
    latest_call_id: str | None = None
    """The call that most recently started its preflight."""
    _running_run: bool = False
    _before_hand: RunState = "idle"
    """The run state a call by hand returns to when it ends."""
    _replied_this_run: bool = False
    reached_back: bool = False
    """An event changed a call or a request of an earlier turn (a model reusing a call
    id does it): the earlier turns' objects are not final (see `view.checkpoint`)."""

    # -- the fold ------------------------------------------------------------------

    def apply(self, event: Any) -> None:
        """Fold one event into the state."""
        self.event_count += 1
        self.last_timestamp = event.timestamp
        handler = _HANDLERS.get(event.type)
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
        handlers = _HANDLERS
        i = 0
        while i < n:
            try:
                while i < n:
                    event = events[i]
                    kind = event.type
                    if kind == "message_update":
                        i = self._message_updates(events, i, n)
                    elif kind == "tool_execution_update":
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
        """Fold the run of deltas to one block starting at `events[i]`; returns its end.

        The scan reads fields from each event's `__dict__`: a pydantic model's own
        attribute access is several times slower, and this loop sees most events.
        """
        ame = events[i].assistant_message_event
        kind = ame.type
        if kind not in _DELTAS:
            self._on_message_update(events[i])
            return i + 1
        index = ame.content_index
        deltas = [ame.delta or ""]
        j = i + 1
        while j < n:
            fields = events[j].__dict__
            if fields["type"] != "message_update":
                break
            ame = fields["assistant_message_event"].__dict__
            if ame["type"] != kind or ame["content_index"] != index:
                break
            deltas.append(ame["delta"] or "")
            j += 1
        self._on_deltas(kind, index, "".join(deltas), j - i)
        return j

    def _tool_updates(self, events: Sequence[Any], i: int, n: int) -> int:
        """Fold the run of `on_update`s from one call starting at `events[i]`."""
        call_id = events[i].tool_call_id
        unrecorded = events[i].unrecorded
        j = i + 1
        while j < n:
            fields = events[j].__dict__
            if fields["type"] != "tool_execution_update" or fields["tool_call_id"] != call_id:
                break
            unrecorded += fields["unrecorded"]
            j += 1
        last = events[j - 1]
        self._on_tool_execution_update(last, count=j - i + unrecorded - last.unrecorded)
        self.calls[call_id].unrecorded += unrecorded - last.unrecorded
        return j

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
        return [self.calls[i] for i in self._started if not self.calls[i].finished]

    # -- run and turn --------------------------------------------------------------

    def _on_agent_start(self, e: Any) -> None:
        self.runs += 1
        self.error = None
        self._running_run = True
        self._replied_this_run = False
        self.run_state = "streaming"

    def _on_agent_end(self, e: Any) -> None:
        self._running_run = False
        self.pause = None
        self.pending_requests.clear()
        last = next((m for m in reversed(e.messages) if isinstance(m, AssistantMessage)), None)
        if last is not None and last.stop_reason == "aborted":
            self.run_state = "aborted"
        elif last is not None and last.stop_reason == "error":
            self.run_state = "error"
            self.error = last.error_message
        else:
            self.run_state = "finished"

    def _on_turn_start(self, e: Any) -> None:
        self.turns.append(
            TurnRecord(index=len(self.turns) + 1, started_at=e.timestamp, run=self.runs)
        )
        self.run_state = "streaming"

    def _on_turn_end(self, e: Any) -> None:
        if self.turns:
            self.turns[-1].ended_at = e.timestamp

    # -- messages ------------------------------------------------------------------

    def _on_message_start(self, e: Any) -> None:
        message = e.message
        if isinstance(message, AssistantMessage):
            item = TimelineItem("assistant", self.turn, streaming=True, timestamp=e.timestamp)
            self.items.append(item)
            if self.turns:
                self.turns[-1].model_started_at = e.timestamp
            self._assistant = item
            self._replied_this_run = True
            self.run_state = "streaming"

    def _on_message_update(self, e: Any) -> None:
        ame = e.assistant_message_event
        kind, index = ame.type, ame.content_index
        if kind in _DELTAS:  # most events: first
            self._on_deltas(kind, index, ame.delta or "", 1)
            return
        item = self._assistant
        if item is None or index is None:
            return
        if kind in ("text_start", "thinking_start", "toolcall_start"):
            while len(item.blocks) <= index:
                item.blocks.append(Block("text"))
            if kind == "toolcall_start":
                call = _block_at(ame.partial, index) or _block_at(e.message, index)
                if isinstance(call, ToolCall):
                    item.blocks[index] = Block("toolCall", tool_call_id=call.id)
                    self._new_call(call.id, call.name, index)
            else:
                item.blocks[index] = Block("text" if kind == "text_start" else "thinking")
        item.rev += 1

    def _on_deltas(self, kind: str, index: int | None, text: str, count: int) -> None:
        """`count` deltas of one kind to block `index`, joined into `text`."""
        item = self._assistant
        if item is None or index is None:
            return
        blocks = item.blocks
        if index < len(blocks):
            if kind != "toolcall_delta":
                blocks[index].text += text
            elif blocks[index].tool_call_id in self.calls:
                record = self.calls[blocks[index].tool_call_id]  # type: ignore[index]
                record.raw = (record.raw or "") + text
                record.rev += count
        item.rev += count

    def _on_delta_run(self, e: DeltaRun) -> None:
        self._on_deltas(e.kind, e.content_index, e.text, e.count)
        self.event_count += e.count - 1  # the fold counts the run as one event

    def _on_message_end(self, e: Any) -> None:
        message = e.message
        if isinstance(message, UserMessage):
            steering = self._running_run and self._replied_this_run
            self.items.append(
                TimelineItem(
                    "user",
                    self.turn,
                    blocks=[Block("text", text_of(message.content))],
                    steering=steering,
                    timestamp=e.timestamp,
                )
            )
        elif isinstance(message, AssistantMessage):
            self._finish_assistant(message, e.timestamp)
            if self.turns:
                self.turns[-1].model_ended_at = e.timestamp
        elif isinstance(message, ToolResultMessage):
            record = self.calls.get(message.tool_call_id)
            if record is not None:
                self.reached_back |= record.turn != self.turn
                record.note(e.timestamp, "result sent to the model")
                record.rev += 1

    def _finish_assistant(self, message: AssistantMessage, timestamp: float) -> None:
        item = self._assistant
        if item is None:
            item = TimelineItem("assistant", self.turn, timestamp=timestamp)
            self.items.append(item)
        item.blocks = []
        for index, block in enumerate(message.content):
            if isinstance(block, ToolCall):
                item.blocks.append(Block("toolCall", tool_call_id=block.id))
                record = self._new_call(block.id, block.name, index)
                record.name = block.name  # a name streamed in pieces is whole only now
                record.raw = block.raw_arguments
                record.parsed = block.arguments
                if record.status == "streaming":
                    record.status = "requested"
                record.rev += 1
            elif block.type == "thinking":
                item.blocks.append(Block("thinking", block.thinking))
            else:
                item.blocks.append(Block("text", block.text))
        item.streaming = False
        item.stop_reason = message.stop_reason
        item.error = message.error_message
        item.rev += 1
        self._assistant = None
        usage = message.usage
        self.input_tokens += usage.input
        self.output_tokens += usage.output
        if self.turns:
            self.turns[-1].input_tokens += usage.input
            self.turns[-1].output_tokens += usage.output
            self.turns[-1].replies.append((message.provider, message.model, usage))
        if message.stop_reason in ("error", "aborted"):
            self.run_state = message.stop_reason if message.stop_reason == "error" else "aborted"
            self.error = message.error_message
        elif message.tool_calls:
            self.run_state = "running_tools"

    def _new_call(self, call_id: str, name: str, index: int) -> ToolCallRecord:
        record = self.calls.get(call_id)
        if record is None:
            record = ToolCallRecord(call_id, name, self.turn, index)
            self.calls[call_id] = record
            if self.turns:
                self.turns[-1].tool_call_ids.append(call_id)
        elif record.turn != self.turn:
            self.reached_back = True
        return record

    # -- tool calls ------------------------------------------------------------------

    def _call(self, e: Any) -> ToolCallRecord:
        record = self.calls.get(e.tool_call_id)
        if record is None:  # a call the fold never saw requested (e.g. a partial replay)
            record = self._new_call(e.tool_call_id, e.tool_name, len(self.calls))
        elif record.turn != self.turn:
            self.reached_back = True
        record.rev += 1
        return record

    def _on_tool_execution_start(self, e: Any) -> None:
        record = self._call(e)
        record.status = "requested"
        record.started_at = e.timestamp
        self._started[e.tool_call_id] = None
        self.latest_call_id = e.tool_call_id
        record.note(e.timestamp, "preflight started", phase="preflight")
        self.run_state = "running_tools"

    def _on_tool_arguments(self, e: Any) -> None:
        record = self._call(e)
        if e.edited:  # a person's edit after the model's failed: the model's stages stay
            record.edited_args = e.validated if e.validated is not None else e.parsed
            record.edited_in = "failed arguments"
            record.stage = "validated" if e.failed_stage is None else "invalid"
            record.note(
                e.timestamp,
                "edited arguments validated"
                if e.failed_stage is None
                else f"edited arguments: {e.failed_stage} failed",
                _first(e.error),
                phase="queued" if e.failed_stage is None else None,
            )
            return
        record.raw = e.raw if e.raw is not None else record.raw
        record.parsed, record.prepared, record.validated = e.parsed, e.prepared, e.validated
        record.failed_stage, record.arg_error = e.failed_stage, e.error
        if e.failed_stage is not None:
            record.status = "invalid"
            record.note(e.timestamp, f"{e.failed_stage} failed", _first(e.error))
        elif e.validated is not None:
            record.status = "validated"
            # Ready: from here it waits for its turn (hooks decide in microseconds; a
            # person's approval or a pause is a phase of its own).
            record.note(e.timestamp, "arguments validated", phase="queued")
        else:
            record.note(e.timestamp, "not run", _first(e.error))

    def _on_tool_execution_phase(self, e: Any) -> None:
        record = self._call(e)
        record.status = "running" if e.phase == "executing" else "after_hook"
        if e.phase == "executing":
            record.executing_at = e.timestamp
        record.note(e.timestamp, e.phase.replace("_", " "), phase=e.phase)

    def _on_tool_execution_update(self, e: Any, count: int = 1) -> None:
        """The latest of `count` updates from one call (each replaces the one before),
        and the `unrecorded` ones a session left out before it."""
        count += e.unrecorded
        record = self._call(e)
        record.unrecorded += e.unrecorded
        content = e.partial_result.content
        if len(content) == 1:  # the usual case: one text block
            record.output = getattr(content[0], "text", "")
        else:
            record.output = result_text(content)
        record.update_count += count
        record.rev += count - 1  # `_call` counted one

    def _on_tool_execution_end(self, e: Any) -> None:
        record = self._call(e)
        record.content, record.details = e.result.content, e.result.details
        record.structured = e.result.structured_content
        record.is_error, record.injected = e.is_error, e.injected
        record.ended_at = e.timestamp
        text = record.result_text
        if record.status == "invalid":
            pass
        elif not e.is_error:
            record.status = "done"
        elif _says_aborted(e.result.details):
            record.status = "aborted"
        elif record.decision is not None and record.decision.decision == "deny":
            record.status = "denied"
        else:
            record.status = "error"
        label = "injected result" if e.injected else ("ended with error" if e.is_error else "ended")
        record.note(e.timestamp, label, _first(text), phase="end")
        self._started.pop(e.tool_call_id, None)
        if not self._started and self._running_run:
            self.run_state = "streaming"

    # -- calls by hand -----------------------------------------------------------------

    def _on_hand_call(self, e: Any) -> None:
        call = e.message.tool_calls[0]
        item = TimelineItem(
            "assistant",
            self.turn,
            blocks=[Block("toolCall", tool_call_id=call.id)],
            stop_reason=e.message.stop_reason,
            timestamp=e.timestamp,
            by_hand=True,
        )
        self.items.append(item)
        record = self.calls[call.id] = ToolCallRecord(call.id, call.name, self.turn, 0)
        record.by_hand = True
        record.raw, record.parsed = call.raw_arguments, call.arguments
        record.status = "requested"
        record.note(e.timestamp, "called by you, by hand")
        self._before_hand = self.run_state

    def _on_hand_call_end(self, e: Any) -> None:
        record = self.calls.get(e.message.tool_call_id)
        if record is not None:
            record.note(e.timestamp, "result kept from the model (you called it)")
            record.rev += 1
        self.run_state = self._before_hand

    # -- gate and stepper ----------------------------------------------------------

    def _on_permission_request(self, e: Any) -> None:
        record = self._call(e)
        record.request = e
        record.status = "awaiting_approval"
        record.note(e.timestamp, "permission requested", e.rule or "", phase="approval")
        self.pending_requests[e.request_id] = e.tool_call_id
        self.run_state = "awaiting_approval"

    def _on_permission_decision(self, e: Any) -> None:
        record = self._call(e)
        record.decision = e
        if e.edited_args is not None:
            record.edited_args, record.edited_in = e.edited_args, "the permission dialog"
        phase = None
        if e.request_id is not None:
            self.pending_requests.pop(e.request_id, None)
            phase = "queued"  # answered: the call waits for its turn
        if record.status == "awaiting_approval":
            record.status = "validated" if e.decision == "allow" else "denied"
        who = e.decided_by + (f": {e.rule}" if e.rule else "")
        record.note(e.timestamp, f"{e.decision} ({who})", e.reason or "", phase=phase)
        if self.run_state == "awaiting_approval" and not self.pending_requests:
            self.run_state = "running_tools"

    def _on_step_mode(self, e: Any) -> None:
        self.step_mode = e.enabled
        self.breakpoints = list(e.breakpoints)

    def _on_step_paused(self, e: Any) -> None:
        self.pause = e
        self.run_state = "paused"
        if e.tool_call_id in self.calls:
            record = self._call(e)
            record.pause = e
            record.status_before_pause = record.status
            record.status = "paused"
            record.note(e.timestamp, f"paused ({e.point})", e.breakpoint or "", phase="paused")

    def _on_step_resumed(self, e: Any) -> None:
        paused = self.pause
        self.pause = None
        if paused is not None and paused.point == "before_model" and self.turns:
            self.turns[-1].paused_ms += e.timestamp - paused.timestamp
        self.run_state = (
            "running_tools" if paused is not None and paused.tool_call_id else "streaming"
        )
        if paused is not None and paused.tool_call_id in self.calls:
            record = self.calls[paused.tool_call_id]
            self.reached_back |= record.turn != self.turn
            record.pause = None
            record.rev += 1
            if e.edited_args is not None:
                record.edited_args = e.edited_args
                record.edited_in = (
                    "failed arguments" if paused.point == "invalid_arguments" else "a pause"
                )
            if e.action == "inject":
                after = paused.point == "after_tool"
                record.injected_at = "in place of its error result" if after else "before it ran"
            if record.status == "paused":
                record.status = record.status_before_pause or "validated"
            resumed_phase = "queued" if paused.point == "before_tool" else None
            record.note(e.timestamp, f"resumed: {e.action}", phase=resumed_phase)

    # -- the wire ------------------------------------------------------------------

    def _on_provider_request(self, e: Any) -> None:
        self.network[e.request_id] = NetworkRecord(e, self.turn)
        if self.turns:
            self.turns[-1].request_ids.append(e.request_id)

    def _on_provider_response(self, e: Any) -> None:
        record = self.network.get(e.request_id)
        if record is not None:
            self.reached_back |= record.turn != self.turn
            record.response = e

    def _on_response_released(self, e: Any) -> None:
        record = self.network.get(e.request_id)
        if record is not None:
            record.released = e

    # -- MCP servers ---------------------------------------------------------------

    def _notice(self, e: Any, level: str = "info") -> None:
        item = TimelineItem(
            "notice", self.turn, [Block("text", e.text)], level=level, timestamp=e.timestamp
        )
        self.items.append(item)  # type: ignore[arg-type]

    def _on_mcp_tools_changed(self, e: Any) -> None:
        self._notice(e)

    def _on_mcp_sampling(self, e: Any) -> None:
        self._notice(e, "info" if e.decision in ("sent", "edited") else "warning")
        prefix = f"{e.server}__"  # the running call of that server asked, if only one runs
        running = [c for c in self._started if self.calls[c].name.startswith(prefix)]
        if len(running) == 1:
            record = self.calls[running[0]]
            record.note(e.timestamp, f"sampling: {e.decision}", e.text)
            record.rev += 1


_HANDLERS = {
    name[len("_on_") :]: method
    for name, method in vars(ViewState).items()
    if name.startswith("_on_") and callable(method)
}


def fold(events: Iterable[Any], state: ViewState | None = None) -> ViewState:
    """Fold `events` into `state` (a fresh one by default) and return it."""
    state = state or ViewState()
    state.apply_all(events if isinstance(events, (list, tuple)) else list(events))
    return state


def _says_aborted(details: Any) -> bool:
    """The loop (and tools that stop on the signal) mark aborts with `details={"aborted": True}`."""
    return isinstance(details, dict) and details.get("aborted") is True


def _block_at(message: Any, index: int) -> Any:
    if message is None or index >= len(message.content):
        return None
    return message.content[index]


def _first(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""
