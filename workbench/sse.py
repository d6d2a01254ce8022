"""Server-sent events, read as a client reads them: the one SSE parser of the product.

The provider reads a body line by line (`SSEDecoder.feed`); the proxy reads bytes
and must pass on or hold whole events (`SSESplitter.feed`), each with the exact
bytes it came in. Both cut lines and events by the same rules, those of the SSE
standard (a line ends at CRLF, LF or CR; a blank line ends an event; a line
starting with ":" is a comment; `data` lines join with newlines), which are the
ones the `openai` SDKs and browsers follow. A parser that cut events differently
from the client (say, only at a double LF) would let a hostile server hide an
event inside another.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

BOM = "\ufeff"


@dataclass
class SSEDecoder:
    """Assembles server-sent events from lines (`data:` fields joined by newlines)."""

    _data: list[str] = field(default_factory=list)
    _event: str | None = None

    def feed(self, line: str) -> tuple[str | None, str] | None:
        """Feed one line (without its line ending); returns (event, data) when one completes."""
        if line == "":
            return self.flush()
        if line.startswith(":"):
            return None  # a comment (keep-alives, OpenRouter's "PROCESSING")
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def flush(self) -> tuple[str | None, str] | None:
        """The pending event, if any (at a blank line or at the end of the body)."""
        if not self._data:
            self._event = None
            return None
        event, data = self._event, "\n".join(self._data)
        self._data, self._event = [], None
        return event, data


@dataclass
class SSEEvent:
    """One event as it came: its bytes (up to and with its blank line) and what they say."""

    raw: bytes
    name: str | None
    data: str | None
    """None for a block of comments only (keep-alives)."""

    def json(self) -> Any:
        """The data as JSON (None if there is none or it is not JSON)."""
        if self.data is None:
            return None
        try:
            from workbench.json_text import LINE_DEPTH, loads

            return loads(self.data, LINE_DEPTH)
        except ValueError:
            return None


class SSESplitter:
    """Bytes in, whole events out, each with its own bytes.

    A line is decoded only once it is whole (so a character cut across two reads
    is never split); a CR at the end of what has come waits for the next byte,
    since a LF right after it belongs to the same line ending.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._raw = bytearray()
        self._decoder = SSEDecoder()
        self._first = True

    def feed(self, data: bytes) -> list[SSEEvent]:
        buffer = self._buffer + data
        out: list[SSEEvent] = []
        start = 0
        size = len(buffer)
        while start < size:
            end = _line_end(buffer, start)
            if end < 0:
                break
            stop = end + 1
            if buffer[end] == 0x0D:
                if stop == size:
                    break  # a LF may follow in the next read
                if buffer[stop] == 0x0A:
                    stop += 1
            self._line(buffer[start:end], buffer[start:stop], out)
            start = stop
        self._buffer = buffer[start:]
        return out

    def rest(self) -> list[SSEEvent]:
        """What is left when the body ends (a last event without its blank line)."""
        out: list[SSEEvent] = []
        if self._buffer:
            tail = self._buffer.rstrip(b"\r")
            self._line(tail, self._buffer, out)
            self._buffer = b""
        if self._raw:
            self._emit(self._decoder.flush(), out)
        return out

    def _line(self, line: bytes, raw: bytes, out: list[SSEEvent]) -> None:
        self._raw += raw
        text = line.decode("utf-8", errors="replace")
        if self._first:
            self._first = False
            text = text.removeprefix(BOM)
        if text == "":
            self._emit(self._decoder.flush(), out)
        else:
            self._decoder.feed(text)

    def _emit(self, event: tuple[str | None, str] | None, out: list[SSEEvent]) -> None:
        raw, self._raw = bytes(self._raw), bytearray()
        if event is None:
            out.append(SSEEvent(raw, None, None))
        else:
            out.append(SSEEvent(raw, event[0], event[1]))


def _line_end(buffer: bytes, start: int) -> int:
    lf = buffer.find(b"\n", start)
    cr = buffer.find(b"\r", start, lf if lf >= 0 else len(buffer))
    return cr if cr >= 0 else lf


def sse_event(chunk: Any, name: str | None = None) -> bytes:
    """One event carrying `chunk` (JSON unless it is a str), as a client will read it."""
    data = chunk if isinstance(chunk, str) else json.dumps(chunk, ensure_ascii=False)
    head = f"event: {name}\n" if name else ""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{lines}\n".encode()


KEEPALIVE = b": workbench: waiting for a decision\n\n"
"""A comment every SSE client skips: keeps a held stream's connection alive."""
