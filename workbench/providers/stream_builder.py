"""Build an AssistantMessage block by block and the stream events that describe it.

Every provider speaks to the loop through the same events; this builder keeps
them consistent: one `start`, `*_start/_delta/_end` per content block (tool calls
may be open several at once, as OpenAI interleaves them by index), then exactly
one `done` or `error` carrying the final message.
"""

from __future__ import annotations

from typing import Any

from workbench.agent.events import AssistantMessageEvent, AssistantMessageEventType
from workbench.agent.stream_apply import apply_delta, apply_stream_event
from workbench.agent.types import (
    AssistantMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

Events = list[AssistantMessageEvent]


class StreamBuilder:
    """Accumulates one assistant reply and emits the matching events.

    Each event is applied to `message` by `apply_stream_event` (a delta by its delta
    part, `apply_delta`, with the values at hand), the rules every reader of the
    stream follows, so `message` is always what the events so far say.
    """

    def __init__(self, model: Model) -> None:
        self.message = AssistantMessage(model=model.id, provider=model.provider)
        self._open: dict[int, None] = {}
        """Content indexes of the open blocks, in opening order."""
        self._prose: int | None = None
        """The open text or thinking block (at most one is open at a time)."""
        self.finished = False

    def _event(self, type_: AssistantMessageEventType, **fields: Any) -> AssistantMessageEvent:
        return AssistantMessageEvent(type=type_, partial=self.message, **fields)

    def _step(
        self, type_: AssistantMessageEventType, started: ToolCall | None = None, **fields: Any
    ) -> AssistantMessageEvent:
        """The event, applied to the message."""
        event = self._event(type_, **fields)
        apply_stream_event(self.message, event, started)
        return event

    def start(self) -> Events:
        return [self._event("start")]

    # -- text and thinking -------------------------------------------------------

    def text(self, delta: str) -> Events:
        return self._append_prose(TextContent, "text", delta)

    def thinking(self, delta: str) -> Events:
        return self._append_prose(ThinkingContent, "thinking", delta)

    def _append_prose(self, cls: type, kind: str, delta: str) -> Events:
        events: Events = []
        content = self.message.content
        last = len(content) - 1
        if last < 0 or last != self._prose or not isinstance(content[last], cls):
            events += self._close_prose()
            last = len(content)
            events.append(self._step(f"{kind}_start", content_index=last))  # type: ignore[arg-type]
            self._open[last] = None
            self._prose = last
        apply_delta(self.message, f"{kind}_delta", last, delta)
        events.append(self._event(f"{kind}_delta", content_index=last, delta=delta))  # type: ignore[arg-type]
        return events

    def _close_prose(self) -> Events:
        if self._prose is None:
            return []
        return self.end_block(self._prose)

    # -- tool calls --------------------------------------------------------------

    def begin_tool_call(self, tool_call_id: str, name: str) -> tuple[int, Events]:
        """Open a tool-call block; returns its content index and the events."""
        events = self._close_prose()
        index = len(self.message.content)
        call = ToolCall(id=tool_call_id, name=name)
        events.append(self._step("toolcall_start", call, content_index=index))
        self._open[index] = None
        return index, events

    def tool_call_delta(self, index: int, delta: str) -> Events:
        apply_delta(self.message, "toolcall_delta", index, delta)
        return [self._event("toolcall_delta", content_index=index, delta=delta)]

    def tool_call_name(self, index: int, name: str) -> None:
        """Some servers send the name in pieces; extend it."""
        call = self.message.content[index]
        assert isinstance(call, ToolCall)
        call.name += name

    def end_block(self, index: int) -> Events:
        if index not in self._open:
            return []
        del self._open[index]
        if index == self._prose:
            self._prose = None
        block = self.message.content[index]
        if isinstance(block, ToolCall):
            return [self._step("toolcall_end", content_index=index)]
        kind = "text" if isinstance(block, TextContent) else "thinking"
        return [self._event(f"{kind}_end", content_index=index)]  # type: ignore[arg-type]

    def close_all(self) -> Events:
        events: Events = []
        for index in list(self._open):
            events += self.end_block(index)
        return events

    # -- the end -----------------------------------------------------------------

    def done(self, stop_reason: StopReason | None = None, usage: Usage | None = None) -> Events:
        """Close every block and finish. The stop reason defaults from the content."""
        events = self.close_all()
        if stop_reason is None:
            stop_reason = "toolUse" if self.message.tool_calls else "stop"
        self.message.stop_reason = stop_reason
        if usage is not None:
            self.message.usage = usage
        self.finished = True
        return events + [AssistantMessageEvent(type="done", message=self.message)]

    def error(
        self, error_message: str, *, aborted: bool = False, usage: Usage | None = None
    ) -> Events:
        """Finish with an error (or an abort), keeping whatever content arrived."""
        events = self.close_all()
        self.message.stop_reason = "aborted" if aborted else "error"
        self.message.error_message = error_message
        if usage is not None:
            self.message.usage = usage
        self.finished = True
        return events + [AssistantMessageEvent(type="error", message=self.message)]
