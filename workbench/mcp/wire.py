"""Every JSON-RPC message between the workbench and one MCP server, both ways.

`Wire` sees each message as the transport carries it (see `streams.py`) and keeps the
last `WIRE_MESSAGES` as entries: when, which way, what it is (`tools/call #3`,
`result #3 (41 ms)`, a notification's method), and its JSON, cut to `TEXT_CHARS` and
with the values of known secrets masked. A response is timed from its request.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types

WIRE_MESSAGES = 500
TEXT_CHARS = 4000


@dataclass(frozen=True)
class WireEntry:
    at: float
    """Seconds since the connection started."""
    outgoing: bool
    summary: str
    text: str

    def line(self) -> str:
        arrow = "→" if self.outgoing else "←"
        return f"{self.at:8.3f}s {arrow} {self.summary}"


class Wire:
    """The messages of one connection; `redact` masks known secrets in their text."""

    def __init__(self, redact: Callable[[str], str] | None = None) -> None:
        self.entries: deque[WireEntry] = deque(maxlen=WIRE_MESSAGES)
        self.redact = redact
        self._start = time.monotonic()
        self._asked: dict[Any, tuple[str, float]] = {}

    def sent(self, item: Any) -> None:
        self._add(item, outgoing=True)

    def received(self, item: Any) -> Any:
        self._add(item, outgoing=False)
        return item

    def _add(self, item: Any, *, outgoing: bool) -> None:
        now = time.monotonic()
        if isinstance(item, Exception):
            summary, text = "(a line that is not JSON-RPC)", f"{type(item).__name__}: {item}"
        else:
            message = getattr(item, "message", item)
            summary = self._summary(message, now, outgoing)
            text = message.model_dump_json(by_alias=True, exclude_none=True)
        if len(text) > TEXT_CHARS:
            text = f"{text[:TEXT_CHARS]}… ({len(text):,} characters in all)"
        if self.redact is not None:
            text = self.redact(text)
        self.entries.append(WireEntry(now - self._start, outgoing, summary, text))

    def _summary(self, message: Any, now: float, outgoing: bool) -> str:
        if isinstance(message, mcp_types.JSONRPCRequest):
            name = (message.params or {}).get("name") if message.method == "tools/call" else None
            self._asked[(outgoing, message.id)] = (message.method, now)
            return f"{message.method}{f' {name}' if isinstance(name, str) else ''} #{message.id}"
        if isinstance(message, mcp_types.JSONRPCNotification):
            return message.method
        kind = "error" if isinstance(message, mcp_types.JSONRPCError) else "result"
        asked = self._asked.pop((not outgoing, message.id), None)
        if asked is None:
            return f"{kind} #{message.id}"
        method, at = asked
        return f"{kind} #{message.id} of {method} ({(now - at) * 1000:.0f} ms)"
