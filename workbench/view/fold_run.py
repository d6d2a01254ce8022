"""The fold's handlers for a run, its turns and messages, the wire and notices.

A streamed assistant message shows as its deltas arrive, by the rules that build the
message itself (`agent.stream_apply`: which block a start opens, which block a delta
extends), applied to the item's own plain blocks: a block's text (a thinking block's
too) is the deltas to it joined, a tool call's raw arguments are its record's. The
fold keeps no message of its own (building pydantic blocks and parsing each call's
arguments as it ends would cost the screen more than it can afford on every delta);
the item is rebuilt from the final message at its end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.agent.stream_apply import DELTAS, STARTS, delta_target, open_at, tool_call_at
from workbench.agent.types import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from workbench.view.fold_calls import new_call
from workbench.view.records import Block, NetworkRecord, NoticeLevel, TimelineItem, TurnRecord

if TYPE_CHECKING:
    from workbench.view.fold import ViewState

# -- run and turn ----------------------------------------------------------------------


def agent_start(state: ViewState, e: Any) -> None:
    state.runs += 1
    state.error = None
    state.in_run = True
    state.replied_this_run = False
    state.run_state = "streaming"


def agent_end(state: ViewState, e: Any) -> None:
    state.in_run = False
    state.pause = None
    state.pending_requests.clear()
    last = next((m for m in reversed(e.messages) if isinstance(m, AssistantMessage)), None)
    if last is not None and last.stop_reason == "aborted":
        state.run_state = "aborted"
    elif last is not None and last.stop_reason == "error":
        state.run_state = "error"
        state.error = last.error_message
    else:
        state.run_state = "finished"


def turn_start(state: ViewState, e: Any) -> None:
    state.turns.append(
        TurnRecord(index=len(state.turns) + 1, started_at=e.timestamp, run=state.runs)
    )
    state.run_state = "streaming"


def turn_end(state: ViewState, e: Any) -> None:
    if state.turns:
        state.turns[-1].ended_at = e.timestamp


# -- messages ------------------------------------------------------------------------


def message_start(state: ViewState, e: Any) -> None:
    if isinstance(e.message, AssistantMessage):
        item = TimelineItem("assistant", state.turn, streaming=True, timestamp=e.timestamp)
        state.items.append(item)
        if state.turns:
            state.turns[-1].model_started_at = e.timestamp
        state.streaming_item = item
        state.replied_this_run = True
        state.run_state = "streaming"


def message_update(state: ViewState, e: Any) -> None:
    ame = e.assistant_message_event
    kind, index = ame.type, ame.content_index
    if kind in DELTAS:  # most events
        deltas(state, kind, index, ame.delta or "", 1)
        return
    item = state.streaming_item
    if item is None or index is None or index < 0:
        return
    if kind in STARTS:
        if kind == "toolcall_start":
            call = tool_call_at(ame.partial, index) or tool_call_at(e.message, index)
            block = Block("toolCall", tool_call_id=call.id if call is not None else None)
            if call is not None:  # a call nothing names has no record: nothing shows it
                new_call(state, call.id, call.name, index).raw = ""  # no arguments yet
        else:
            block = Block("text" if kind == "text_start" else "thinking")
        open_at(item.blocks, index, block, _blank)
    item.rev += 1


def _blank() -> Block:
    return Block("text")


def deltas(state: ViewState, kind: str, index: int | None, text: str, count: int) -> None:
    """`count` deltas of one kind to block `index`, joined into `text`."""
    item = state.streaming_item
    if item is None or index is None:
        return
    block = delta_target(item.blocks, kind, index)
    if block is None:
        pass
    elif kind != "toolcall_delta":
        block.text += text
    elif block.tool_call_id in state.calls:
        record = state.calls[block.tool_call_id]
        record.raw = (record.raw or "") + text
        record.rev += count
    item.rev += count


def message_end(state: ViewState, e: Any) -> None:
    message = e.message
    if isinstance(message, UserMessage):
        steering = state.in_run and state.replied_this_run
        state.items.append(
            TimelineItem(
                "user",
                state.turn,
                blocks=[Block("text", text_of(message.content))],
                steering=steering,
                timestamp=e.timestamp,
            )
        )
    elif isinstance(message, AssistantMessage):
        _finish_assistant(state, message, e.timestamp)
        if state.turns:
            state.turns[-1].model_ended_at = e.timestamp
    elif isinstance(message, ToolResultMessage):
        record = state.calls.get(message.tool_call_id)
        if record is not None:
            state.reached_back |= record.turn != state.turn
            record.note(e.timestamp, "result sent to the model")
            record.rev += 1


def _finish_assistant(state: ViewState, message: AssistantMessage, timestamp: float) -> None:
    item = state.streaming_item
    if item is None:
        item = TimelineItem("assistant", state.turn, timestamp=timestamp)
        state.items.append(item)
    item.blocks = []
    for index, block in enumerate(message.content):
        if isinstance(block, ToolCall):
            item.blocks.append(Block("toolCall", tool_call_id=block.id))
            record = new_call(state, block.id, block.name, index)
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
    state.streaming_item = None
    usage = message.usage
    if message.stop_reason not in ("error", "aborted") and not (
        usage.input or usage.output or usage.total_tokens
    ):
        state.replies_without_usage += 1
    state.input_tokens += usage.input
    state.output_tokens += usage.output
    if state.turns:
        turn = state.turns[-1]
        turn.input_tokens += usage.input
        turn.output_tokens += usage.output
        turn.replies.append((message.provider, message.model, usage))
    if message.stop_reason in ("error", "aborted"):
        state.run_state = message.stop_reason
        state.error = message.error_message
    elif message.tool_calls:
        state.run_state = "running_tools"


# -- the wire ------------------------------------------------------------------------


def provider_request(state: ViewState, e: Any) -> None:
    state.network[e.request_id] = NetworkRecord(e, state.turn)
    if state.turns:
        state.turns[-1].request_ids.append(e.request_id)


def provider_response(state: ViewState, e: Any) -> None:
    record = state.network.get(e.request_id)
    if record is not None:
        state.reached_back |= record.turn != state.turn
        record.response = e


def response_released(state: ViewState, e: Any) -> None:
    record = state.network.get(e.request_id)
    if record is not None:
        record.released = e


# -- notices from MCP servers --------------------------------------------------------


def _notice(state: ViewState, e: Any, level: NoticeLevel = "info") -> None:
    item = TimelineItem(
        "notice", state.turn, [Block("text", e.text)], level=level, timestamp=e.timestamp
    )
    state.items.append(item)


def mcp_tools_changed(state: ViewState, e: Any) -> None:
    _notice(state, e)


def acp_notice(state: ViewState, e: Any) -> None:
    _notice(state, e, "warning" if e.kind == "agent_stderr" else "info")


def proxy_notice(state: ViewState, e: Any) -> None:
    _notice(state, e)


def mcp_sampling(state: ViewState, e: Any) -> None:
    _notice(state, e, "info" if e.decision in ("sent", "edited") else "warning")
    prefix = f"{e.server}__"  # the running call of that server asked, if only one runs
    running = [c for c in state.started if state.calls[c].name.startswith(prefix)]
    if len(running) == 1:
        record = state.calls[running[0]]
        record.note(e.timestamp, f"sampling: {e.decision}", e.text)
        record.rev += 1
