"""The summary line: what the session library keeps of a session, written into the
session file by the recorder, so a folder of sessions is indexed from each file's
last line instead of from every event (see `sessions.library`).

The recorder summarizes the events as it writes them (`summary.Summarizer`) and
writes a summary line after each run's `agent_end` and when it closes. The line has
the shape of an event line (`{"seq", "ts", "event": {"type": "session_summary",
...}}`), so a workbench older than it skips it with a warning, and this reader skips
it (`reader`). It holds:

- `covers`: the file's length before the line, and `crc32`: the CRC of those bytes;
- the summary's counts, outcome and header fields (all of it at that point);
- the searchable text added since the previous summary line, and `previous`: where
  that line starts (a session with several runs holds each piece of text once).

`read_summary` trusts a file's summary only when its last line is a summary line of
this version that covers every byte before it, with the same CRC: a file that grew
after it (a run still being recorded), was cut short, edited or written by an
older workbench (no summary line) is summarized from its events instead, as before.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from workbench.sessions.header import FORMAT, FORMAT_VERSION
from workbench.sessions.summary import (
    SEARCHED,
    Summarizer,
    Summary,
    ToolCount,
    summarize,
    tools_text,
)

SUMMARY_TYPE = "session_summary"
MARKER = b'"event":{"type":"session_summary"'
"""Bytes near the start of every summary line (`is_summary_line` decides)."""
VERSION = 1
"""Of the summary line's fields (a line of another version is not used)."""
TAIL = 64 * 1024
"""Bytes read from the end of a file first, looking for its last line."""
LONGEST = 64 * 1024 * 1024
"""The longest last line looked for (past it, the events are read)."""
_KEPT = ("text", "problem", "by_tool")
_HEADER_START = re.compile(
    rb'\{"kind": "header", "format": "'
    + re.escape(FORMAT.encode())
    + rb'", "version": ([0-9]{1,9}),'
)


class SummaryWriter:
    """The recorder's summary of what it wrote: `wrote` every byte, `count` every
    event; `line` makes the summary line to write next."""

    def __init__(self, header: Any) -> None:
        self.summarizer = Summarizer(header)
        self.size = 0
        self.crc = 0
        self.previous: int | None = None
        self.stale = False
        """Events were written since the last summary line."""
        self._sent = dict.fromkeys(SEARCHED, 0)

    def wrote(self, data: bytes) -> None:
        self.size += len(data)
        self.crc = zlib.crc32(data, self.crc)

    def count(self, event: Any, ts: float) -> None:
        self.summarizer.count(event, ts)
        self.stale = True

    def line(self, seq: int, ts: float) -> bytes:
        """The summary line for the file as it is now (it starts at `self.size`)."""
        summary = self.summarizer.finish()
        parts = self.summarizer.text.parts
        fields = {k: v for k, v in summary.__dict__.items() if k not in _KEPT}
        fields["by_tool"] = {name: count.__dict__ for name, count in summary.by_tool.items()}
        event = {
            "type": SUMMARY_TYPE,
            "version": VERSION,
            "covers": self.size,
            "crc32": self.crc,
            "previous": self.previous,
            "summary": fields,
            "text": {name: parts[name][self._sent[name] :] for name in SEARCHED},
        }
        body = json.dumps(event, ensure_ascii=True, separators=(",", ":"), default=str)
        return f'{{"seq":{seq},"ts":{ts:.3f},"event":{body}}}\n'.encode("ascii")

    def written(self, start: int) -> None:
        """The line `line` made was written, starting at byte `start`."""
        self.previous = start
        self._sent = {name: len(self.summarizer.text.parts[name]) for name in SEARCHED}
        self.stale = False


def is_summary_line(line: Any) -> bool:
    """Whether a decoded line is a summary line."""
    event = line.get("event") if isinstance(line, dict) else None
    return isinstance(event, dict) and event.get("type") == SUMMARY_TYPE


def summary_of(path: Path) -> Summary | None:
    """The summary of one session file: from its summary line when it has one that
    covers the whole file, else from its events (None: the file is gone)."""
    from workbench.sessions.reader import SessionError

    summary = read_summary(path)
    if summary is not None:
        return summary
    try:
        return summarize(path)
    except SessionError as exc:
        return Summary(outcome="unreadable", problem=str(exc))
    except FileNotFoundError:
        return None


def read_summary(path: Path) -> Summary | None:
    """The summary the file's last line holds, when it holds one this workbench can
    trust for the whole file (see the module); None: summarize the events."""
    try:
        with path.open("rb") as handle:
            return _read(handle)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # not one of ours
        return None


def _read(handle: BinaryIO) -> Summary | None:
    size = handle.seek(0, 2)
    line, block, start = _last_line(handle, size)
    if line is None or MARKER not in line[:120]:
        return None
    event = json.loads(line).get("event")
    if not is_summary_line({"event": event}) or event.get("version") != VERSION:
        return None
    covers = event["covers"]
    if covers != size - len(line) or not _header_readable(handle):
        return None
    if start == 0:  # the whole file is in `block`
        crc = zlib.crc32(memoryview(block)[:covers])
    else:
        crc = _crc(handle, covers)
    if crc != event["crc32"]:
        return None
    text = {name: list(event["text"][name]) for name in SEARCHED}
    _earlier_text(handle, event.get("previous"), covers, text)
    return _summary(event["summary"], text)


def _last_line(handle: BinaryIO, size: int) -> tuple[bytes | None, bytes, int]:
    """The file's last line (with its newline; None when it has none), the block read
    from the end to find it and where that block starts."""
    want = TAIL
    while True:
        start = max(0, size - want)
        handle.seek(start)
        block = handle.read(size - start)
        if not block.endswith(b"\n"):
            return None, block, start
        cut = block.rfind(b"\n", 0, len(block) - 1)
        if cut >= 0:
            return block[cut + 1 :], block, start
        if start == 0:  # one line only: the header
            return None, block, start
        if want >= LONGEST:
            return None, block, start
        want *= 4


def _header_readable(handle: BinaryIO) -> bool:
    """Whether the first line is a header of a format version this workbench reads
    (read from its start as the recorder writes it, else parsed whole)."""
    handle.seek(0)
    start = handle.read(200)
    found = _HEADER_START.match(start)
    if found is not None:
        return 1 <= int(found[1]) <= FORMAT_VERSION
    handle.seek(0)
    header = json.loads(handle.readline())
    version = header.get("version")
    return (
        header.get("format") == FORMAT
        and isinstance(version, int)
        and not isinstance(version, bool)
        and 1 <= version <= FORMAT_VERSION
    )


def _crc(handle: BinaryIO, length: int) -> int:
    handle.seek(0)
    crc = 0
    while length > 0:
        chunk = handle.read(min(length, 1 << 20))
        if not chunk:
            break
        crc = zlib.crc32(chunk, crc)
        length -= len(chunk)
    return crc


def _earlier_text(handle: BinaryIO, previous: Any, before: int, text: dict[str, list[str]]) -> None:
    """Put the text of the earlier summary lines in front of `text`'s (the CRC checked
    already covers those lines)."""
    while previous is not None:
        if not isinstance(previous, int) or not 0 < previous < before:
            raise ValueError("a summary line points past the one after it")
        handle.seek(previous)
        event = json.loads(handle.readline())["event"]
        if event.get("type") != SUMMARY_TYPE:
            raise ValueError("a summary line points at another line")
        for name in SEARCHED:
            text[name][:0] = event["text"][name]
        before, previous = previous, event.get("previous")


def _summary(fields: dict[str, Any], text: dict[str, list[str]]) -> Summary:
    by_tool = {name: ToolCount(**count) for name, count in fields.pop("by_tool").items()}
    summary = Summary(**fields, by_tool=by_tool)
    summary.text = {name: "\n".join(parts) for name, parts in text.items()}
    summary.text["tools"] = tools_text(summary)
    return summary
