"""The fold's handlers for a tool call's life: preflight, arguments, permission,
pauses, execution, updates and its end, and calls a person makes by hand.

Each changes the call's record (`ToolCallRecord`): its status, what it holds, and
a line of its own history, with the phase the call enters when it enters one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.agent.types import result_text
from workbench.view.records import Block, CallPhase, TimelineItem, ToolCallRecord

if TYPE_CHECKING:
    from workbench.view.fold import ViewState


def new_call(state: ViewState, call_id: str, name: str, index: int) -> ToolCallRecord:
    """The record of call `call_id`, made when the fold first sees the call."""
    record = state.calls.get(call_id)
    if record is None:
        record = ToolCallRecord(call_id, name, state.turn, index)
        state.calls[call_id] = record
        if state.turns:
            state.turns[-1].tool_call_ids.append(call_id)
    elif record.turn != state.turn:
        state.reached_back = True
    return record


def _call(state: ViewState, e: Any) -> ToolCallRecord:
    """The record the event `e` is about, marked changed."""
    record = state.calls.get(e.tool_call_id)
    if record is None:  # a call the fold never saw requested (e.g. a partial replay)
        record = new_call(state, e.tool_call_id, e.tool_name, len(state.calls))
    elif record.turn != state.turn:
        state.reached_back = True
    record.rev += 1
    return record


# -- execution -----------------------------------------------------------------------


def execution_start(state: ViewState, e: Any) -> None:
    record = _call(state, e)
    record.status = "requested"
    record.started_at = e.timestamp
    state.started[e.tool_call_id] = None
    state.latest_call_id = e.tool_call_id
    record.note(e.timestamp, "preflight started", phase="preflight")
    state.run_state = "running_tools"


def arguments(state: ViewState, e: Any) -> None:
    record = _call(state, e)
    if e.edited:  # a person's edit after the model's failed: the model's stages stay
        record.edited_args = e.validated if e.validated is not None else e.parsed
        record.edited_in = "failed arguments"
        record.status = "validated" if e.failed_stage is None else "invalid"
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


def execution_phase(state: ViewState, e: Any) -> None:
    record = _call(state, e)
    record.status = "running" if e.phase == "executing" else "after_hook"
    if e.phase == "executing":
        record.executing_at = e.timestamp
    record.note(e.timestamp, e.phase.replace("_", " "), phase=e.phase)


def execution_update(state: ViewState, e: Any, count: int = 1) -> None:
    """The latest of `count` updates from one call (each replaces the one before),
    and the `unrecorded` ones a session left out before it."""
    count += e.unrecorded
    record = _call(state, e)
    record.unrecorded += e.unrecorded
    content = e.partial_result.content
    if len(content) == 1:  # the usual case: one text block
        record.output = getattr(content[0], "text", "")
    else:
        record.output = result_text(content)
    record.update_count += count
    record.rev += count - 1  # `_call` counted one


def execution_end(state: ViewState, e: Any) -> None:
    record = _call(state, e)
    record.content, record.details = e.result.content, e.result.details
    record.structured = e.result.structured_content
    record.is_error, record.injected = e.is_error, e.injected
    record.ended_at = e.timestamp
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
    record.note(e.timestamp, label, _first(record.result_text), phase="end")
    state.started.pop(e.tool_call_id, None)
    if not state.started and state.in_run:
        state.run_state = "streaming"


def acp_call_update(state: ViewState, e: Any) -> None:
    """A line of an ACP agent's own account of the call (kind, title, status, ...)."""
    record = _call(state, e)
    record.note(e.timestamp, e.label, e.detail)


# -- calls by hand -------------------------------------------------------------------


def hand_call(state: ViewState, e: Any) -> None:
    call = e.message.tool_calls[0]
    item = TimelineItem(
        "assistant",
        state.turn,
        blocks=[Block("toolCall", tool_call_id=call.id)],
        stop_reason=e.message.stop_reason,
        timestamp=e.timestamp,
        by_hand=True,
    )
    state.items.append(item)
    record = state.calls[call.id] = ToolCallRecord(call.id, call.name, state.turn, 0)
    record.by_hand = True
    record.raw, record.parsed = call.raw_arguments, call.arguments
    record.status = "requested"
    record.note(e.timestamp, "called by you, by hand")
    state.state_before_hand = state.run_state


def hand_call_end(state: ViewState, e: Any) -> None:
    record = state.calls.get(e.message.tool_call_id)
    if record is not None:
        record.note(e.timestamp, "result kept from the model (you called it)")
        record.rev += 1
    state.run_state = state.state_before_hand


# -- gate and stepper ----------------------------------------------------------------


def permission_request(state: ViewState, e: Any) -> None:
    record = _call(state, e)
    record.request = e
    record.status = "awaiting_approval"
    record.note(e.timestamp, "permission requested", e.rule or "", phase="approval")
    state.pending_requests[e.request_id] = e.tool_call_id
    state.run_state = "awaiting_approval"


def permission_decision(state: ViewState, e: Any) -> None:
    record = _call(state, e)
    record.decision = e
    if e.edited_args is not None:
        record.edited_args, record.edited_in = e.edited_args, "the permission dialog"
    phase: CallPhase | None = None
    if e.request_id is not None:
        state.pending_requests.pop(e.request_id, None)
        phase = "queued"  # answered: the call waits for its turn
    if record.status == "awaiting_approval" and e.decision == "allow":
        # an ACP agent may ask about a call it reported running: it goes on running
        record.status = "running" if record.executing_at is not None else "validated"
    elif record.status == "awaiting_approval":
        record.status = "denied"
    who = e.decided_by + (f": {e.rule}" if e.rule else "")
    record.note(e.timestamp, f"{e.decision} ({who})", e.reason or "", phase=phase)
    if state.run_state == "awaiting_approval" and not state.pending_requests:
        state.run_state = "running_tools"


def step_mode(state: ViewState, e: Any) -> None:
    state.step_mode = e.enabled
    state.breakpoints = list(e.breakpoints)


def step_paused(state: ViewState, e: Any) -> None:
    state.pause = e
    state.run_state = "paused"
    if e.tool_call_id in state.calls:
        record = _call(state, e)
        record.pause = e
        record.status_before_pause = record.status
        record.status = "paused"
        record.note(e.timestamp, f"paused ({e.point})", e.breakpoint or "", phase="paused")


def step_resumed(state: ViewState, e: Any) -> None:
    paused = state.pause
    state.pause = None
    if paused is not None and paused.point == "before_model" and state.turns:
        state.turns[-1].paused_ms += e.timestamp - paused.timestamp
    state.run_state = "running_tools" if paused is not None and paused.tool_call_id else "streaming"
    if paused is None or paused.tool_call_id not in state.calls:
        return
    record = state.calls[paused.tool_call_id]
    state.reached_back |= record.turn != state.turn
    record.pause = None
    record.rev += 1
    if e.edited_args is not None:
        record.edited_args = e.edited_args
        record.edited_in = "failed arguments" if paused.point == "invalid_arguments" else "a pause"
    if e.action == "inject":
        after = paused.point == "after_tool"
        record.injected_at = "in place of its error result" if after else "before it ran"
    if record.status == "paused":
        record.status = record.status_before_pause or "validated"
    resumed_phase: CallPhase | None = "queued" if paused.point == "before_tool" else None
    record.note(e.timestamp, f"resumed: {e.action}", phase=resumed_phase)


def _says_aborted(details: Any) -> bool:
    """The loop (and tools that stop on the signal) mark aborts with `details={"aborted": True}`."""
    return isinstance(details, dict) and details.get("aborted") is True


def _first(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""
