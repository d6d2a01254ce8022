"""Every JSON-RPC message between the workbench and one MCP server, both ways.

`Wire` sees each message as the transport carries it (see `streams.py`) and keeps the
last `WIRE_MESSAGES` as entries (older ones go first once they hold more than
`WIRE_CHARS` in all): when, which way, what it is (`tools/call #3`, `result #3
(41 ms)`, a notification's method), its method, and its JSON, whole up to
`TEXT_CHARS` and with the values of known secrets masked. A response is timed from
its request.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types

WIRE_MESSAGES = 5000
TEXT_CHARS = 1_000_000
WIRE_CHARS = 32_000_000


@dataclass(frozen=True)
class WireEntry:
    at: float
    """Seconds since the connection started."""
    outgoing: bool
    summary: str
    text: str
    method: str = ""
    """The request's or notification's method; for an answer, its request's."""
    clock: float = 0.0
    """`time.monotonic()` when it passed (to merge the wires of several servers)."""

    def line(self) -> str:
        arrow = "→" if self.outgoing else "←"
        return f"{self.at:8.3f}s {arrow} {self.summary}"


class Wire:
    """The messages of one connection; `redact` masks known secrets in their text."""

    def __init__(self, redact: Callable[[str], str] | None = None) -> None:
        self.entries: deque[WireEntry] = deque(maxlen=WIRE_MESSAGES)
        self.redact = redact
        self._chars = 0
        self._start = time.monotonic()
        self._asked: dict[Any, tuple[str, float]] = {}
        self.on_entry: Callable[[WireEntry], None] | None = None
        """Told each new entry (the hub records them in the session)."""

    def sent(self, item: Any) -> None:
        self._add(item, outgoing=True)

    def received(self, item: Any) -> Any:
        self._add(item, outgoing=False)
        return item

    def _add(self, item: Any, *, outgoing: bool) -> None:
        now = time.monotonic()
        method = ""
        if isinstance(item, Exception):
            summary, text = "(a line that is not JSON-RPC)", f"{type(item).__name__}: {item}"
        else:
            message = getattr(item, "message", item)
            summary, method = self._summary(message, now, outgoing)
            text = message.model_dump_json(by_alias=True, exclude_none=True)
        if len(text) > TEXT_CHARS:
            text = f"{text[:TEXT_CHARS]}… ({len(text):,} characters in all)"
        if self.redact is not None:
            text = self.redact(text)
        if len(self.entries) == self.entries.maxlen:
            self._chars -= len(self.entries[0].text)
        entry = WireEntry(now - self._start, outgoing, summary, text, method, now)
        self.entries.append(entry)
        self._chars += len(text)
        if self.on_entry is not None:
            self.on_entry(entry)
        while self._chars > WIRE_CHARS and len(self.entries) > 1:
            self._chars -= len(self.entries.popleft().text)

    def _summary(self, message: Any, now: float, outgoing: bool) -> tuple[str, str]:
        if isinstance(message, mcp_types.JSONRPCRequest):
            name = (message.params or {}).get("name") if message.method == "tools/call" else None
            self._asked[(outgoing, message.id)] = (message.method, now)
            named = f" {name}" if isinstance(name, str) else ""
            return f"{message.method}{named} #{message.id}", message.method
        if isinstance(message, mcp_types.JSONRPCNotification):
            return message.method, message.method
        kind = "error" if isinstance(message, mcp_types.JSONRPCError) else "result"
        asked = self._asked.pop((not outgoing, message.id), None)
        if asked is None:
            return f"{kind} #{message.id}", ""
        method, at = asked
        return f"{kind} #{message.id} of {method} ({(now - at) * 1000:.0f} ms)", method
