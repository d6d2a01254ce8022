"""One event <-> one JSON line, with streamed messages stored compactly.

A line is `{"seq": N, "ts": <epoch ms written>, "event": <the event as JSON>}`.

Every `message_update` event carries the whole message streamed so far (`message`,
and `assistant_message_event.partial`), so writing them as they are costs O(n^2)
bytes for a reply of n deltas. The fold never reads those (it builds streamed text
from the deltas, see `workbench.view.fold`), so they are left out: a
`message_update` line keeps only the stream event's type, index and delta. The one
thing the fold does read from the partial message is the id and name of a tool
call when it starts, so a `toolcall_start` line carries that call as it started
(its id and name, no arguments yet) as `block`. `Decoder` rebuilds the partial
message from the events by `apply_stream_event` (the rules the provider built it
by), one shared object per reply exactly as the live stream shares one, so every
event read back is a whole, valid event again. (A `message_update` has no other
optional fields, so its None fields are left out too: the defaults read back the
same.)
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError

from workbench.agent import AssistantMessage, ToolCall
from workbench.agent.stream_apply import apply_stream_event, started_call, tool_call_at
from workbench.bus_events import parse_event
from workbench.json_text import utf8
from workbench.sessions.compact import EXPANDED, Expander

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
            call = tool_call_at(ame.partial, ame.content_index) or tool_call_at(
                event.message, ame.content_index
            )
            if call is not None:
                extra = ',"block":' + _json(started_call(call))
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
        text: str = model.model_dump_json(fallback=str, **options)
        return text
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

    def __init__(self, *, keep_run: bool = True) -> None:
        """`keep_run`: see `Expander` (False only for a reader that checks the lines)."""
        self._partial: AssistantMessage | None = None
        self.expander = Expander(keep_run=keep_run)

    def decode(self, line: dict[str, Any]) -> Any:
        """The event of one decoded line (raises pydantic's ValidationError if bad, and
        ValueError for a compact line whose earlier lines were not read)."""
        data = line["event"]
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "message_update" and "message" not in data:
            return self._update(data, line.get("block"))
        if kind in EXPANDED:
            data = self.expander.expand(line, data)
        event = parse_event(data)
        self.expander.read(event)
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
        ame["partial"] = partial
        event = parse_event({**data, "message": partial, "assistant_message_event": ame})
        started = ToolCall.model_validate(block) if block else None
        apply_stream_event(partial, event.assistant_message_event, started)
        return event


def dumps_header(header: Any) -> bytes:
    """The header line (newline included)."""
    return utf8(json.dumps(header.model_dump(mode="json"), ensure_ascii=False) + "\n")
