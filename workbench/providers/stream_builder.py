"""Build an AssistantMessage block by block and the stream events that describe it.

Every provider speaks to the loop through the same events; this builder keeps
them consistent: one `start`, `*_start/_delta/_end` per content block (tool calls
may be open several at once, as OpenAI interleaves them by index), then exactly
one `done` or `error` carrying the final message.
"""

from __future__ import annotations

from typing import Any

from workbench.agent.events import AssistantMessageEvent, AssistantMessageEventType
from workbench.agent.types import (
    AssistantMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from workbench.json_text import loads

Events = list[AssistantMessageEvent]


class StreamBuilder:
    """Accumulates one assistant reply and emits the matching events."""

    def __init__(self, model: Model) -> None:
        self.message = AssistantMessage(model=model.id, provider=model.provider)
        self._open: dict[int, None] = {}
        """Content indexes of the open blocks, in opening order."""
        self._prose: int | None = None
        """The open text or thinking block (at most one is open at a time)."""
        self._raw: dict[int, list[str]] = {}
        self.finished = False

    def _event(self, type_: AssistantMessageEventType, **fields: Any) -> AssistantMessageEvent:
        return AssistantMessageEvent(type=type_, partial=self.message, **fields)

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
            content.append(cls(**{kind: ""}))
            last = len(content) - 1
            self._open[last] = None
            self._prose = last
            events.append(self._event(f"{kind}_start", content_index=last))  # type: ignore[arg-type]
        block = content[last]
        setattr(block, kind, getattr(block, kind) + delta)
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
        self.message.content.append(ToolCall(id=tool_call_id, name=name, raw_arguments=""))
        index = len(self.message.content) - 1
        self._open[index] = None
        self._raw[index] = []
        events.append(self._event("toolcall_start", content_index=index))
        return index, events

    def tool_call_delta(self, index: int, delta: str) -> Events:
        self._raw[index].append(delta)
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
            raw = "".join(self._raw.pop(index, []))
            block.raw_arguments = raw
            block.arguments = parse_arguments_leniently(raw)
            return [self._event("toolcall_end", content_index=index)]
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


def parse_arguments_leniently(raw: str) -> dict[str, Any]:
    """The arguments as a dict if `raw` is a JSON object, else {} (the loop reports why)."""
    if not raw.strip():
        return {}
    try:
        value = loads(raw)
    except ValueError:  # malformed, or nested too deep: the argument pipeline says which
        return {}
    return value if isinstance(value, dict) else {}
