"""One event <-> one JSON line, with streamed messages stored compactly.

A line is `{"seq": N, "ts": <epoch ms written>, "event": <the event as JSON>}`.

Every `message_update` event carries the whole message streamed so far (`message`,
and `assistant_message_event.partial`), so writing them as they are costs O(n^2)
bytes for a reply of n deltas. The fold never reads those (it builds streamed text
from the deltas, see `workbench.view.fold`), so they are left out: a
`message_update` line keeps only the stream event's type, index and delta. The one
thing the fold does read from the partial message is the id and name of a tool
call when it starts, so a `toolcall_start` line carries that block as `block`.
`Decoder` rebuilds the partial message from the deltas, one shared object per
reply exactly as the live stream shares one, so every event read back is a whole,
valid event again. (A `message_update` has no other optional fields, so its
None fields are left out too: the defaults read back the same.)
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError

from workbench.agent import AssistantMessage, TextContent, ThinkingContent, ToolCall
from workbench.bus_events import parse_event
from workbench.json_text import utf8
from workbench.providers.stream_builder import parse_arguments_leniently
from workbench.sessions.compact import Expander

_COMPACT = {"message": True, "assistant_message_event": {"partial": True}}
UNRECORDABLE = "unrecordable"
"""The type of the line written in place of an event no JSON line can hold."""


def encode(
    seq: int, ts: float, event: Any, fields: dict[str, Any] | None = None, exclude: Any = None
) -> bytes:
    """The line for `event` (newline included). Values JSON cannot hold become strings.

    `fields` are added to the line and `exclude` left out of the event, as
    `sessions.compact` decides for a tool's updates."""
    extra = ""
    if fields:
        extra = "".join(
            f",{json.dumps(k)}:{json.dumps(v, ensure_ascii=False, default=str)}"
            for k, v in fields.items()
        )
    if exclude is not None:
        body = _json(event, exclude=exclude)
    elif event.type == "message_update":
        ame = event.assistant_message_event
        body = _json(event, exclude=_COMPACT, exclude_none=True)
        if ame.type == "toolcall_start" and ame.content_index is not None:
            block = _block_at(ame.partial, ame.content_index) or _block_at(
                event.message, ame.content_index
            )
            if isinstance(block, ToolCall):
                extra = ',"block":' + _json(block)
    else:
        body = _json(event)
    return utf8(f'{{"seq":{seq},"ts":{ts:.3f},"event":{body}{extra}}}\n')


def _json(model: Any, **options: Any) -> str:
    """`model` as compact JSON text, which may hold lone surrogates (`utf8` escapes them).

    Pydantic writes UTF-8 and refuses a lone surrogate (a model's `"\\ud800"`, a file
    name that is not UTF-8), so such a model is written by `json` instead, from the
    same fields.
    """
    try:
        return model.model_dump_json(fallback=str, **options)
    except PydanticSerializationError:
        data = model.model_dump(**options)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def encode_unrecordable(seq: int, ts: float, event: Any, error: str) -> bytes:
    """The line that keeps an unwritable event's place: its type and why (the reader
    reports it and skips it)."""
    body = {"type": UNRECORDABLE, "event_type": str(getattr(event, "type", "?")), "error": error}
    return utf8(
        json.dumps({"seq": seq, "ts": round(ts, 3), "event": body}, ensure_ascii=False) + "\n"
    )


class Decoder:
    """Turns decoded lines back into events, rebuilding compact stream messages."""

    def __init__(self) -> None:
        self._partial: AssistantMessage | None = None
        self._expander = Expander()

    def decode(self, line: dict[str, Any]) -> Any:
        """The event of one decoded line (raises pydantic's ValidationError if bad, and
        ValueError for a compact line whose earlier lines were not read)."""
        data = line["event"]
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "message_update" and "message" not in data:
            return self._update(data, line.get("block"))
        if kind == "tool_execution_update":
            data = self._expander.expand(line, data)
        event = parse_event(data)
        self._expander.read(event)
        if kind == "message_start" and isinstance(event.message, AssistantMessage):
            self._partial = event.message
        elif kind == "message_end":
            self._partial = None
        return event

    def _update(self, data: dict[str, Any], block: dict[str, Any] | None) -> Any:
        partial = self._partial
        if partial is None:  # a stream whose message_start was lost: start one
            partial = self._partial = AssistantMessage()
        ame = dict(data.get("assistant_message_event") or {})
        _apply(partial, ame, block)
        ame["partial"] = partial
        return parse_event({**data, "message": partial, "assistant_message_event": ame})


def _apply(partial: AssistantMessage, ame: dict[str, Any], block: dict[str, Any] | None) -> None:
    """Advance the rebuilt partial message by one stream event, as the provider did."""
    index = ame.get("content_index")
    if not isinstance(index, int) or index < 0:
        return
    kind = ame.get("type")
    content = partial.content
    delta = ame.get("delta") or ""
    if kind in ("text_start", "thinking_start", "toolcall_start"):
        while len(content) <= index:
            content.append(TextContent(text=""))
        if kind == "text_start":
            content[index] = TextContent(text="")
        elif kind == "thinking_start":
            content[index] = ThinkingContent(thinking="")
        else:
            call = ToolCall.model_validate(block) if block else ToolCall(id="", name="")
            content[index] = call.model_copy(update={"raw_arguments": call.raw_arguments or ""})
        return
    if index >= len(content):
        return
    current = content[index]
    if kind == "text_delta" and isinstance(current, TextContent):
        current.text += delta
    elif kind == "thinking_delta" and isinstance(current, ThinkingContent):
        current.thinking += delta
    elif kind == "toolcall_delta" and isinstance(current, ToolCall):
        current.raw_arguments = (current.raw_arguments or "") + delta
    elif kind == "toolcall_end" and isinstance(current, ToolCall):
        current.arguments = parse_arguments_leniently(current.raw_arguments or "")


def _block_at(message: Any, index: int) -> Any:
    if message is None or index >= len(message.content):
        return None
    return message.content[index]


def dumps_header(header: Any) -> bytes:
    """The header line (newline included)."""
    return utf8(json.dumps(header.model_dump(mode="json"), ensure_ascii=False) + "\n")
