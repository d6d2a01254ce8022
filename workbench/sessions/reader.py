"""Read a session file back: its header and its events, as the bus carried them.

What can be wrong with a session file, and what happens:

- not a session file, an unknown or newer format version, no complete header:
  `SessionError` with one clear sentence (the CLI prints it, no traceback);
- a torn last line (the recording process was killed mid-write): reported in
  `warnings` and skipped; everything before it reads;
- an event type this workbench does not know (written by a newer one): reported
  and skipped;
- any other bad line: `SessionError` naming the line.
"""

from __future__ import annotations

import gc
from bisect import bisect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from workbench.bus_events import BusEvent
from workbench.json_text import LINE_DEPTH, JsonDepthError, loads
from workbench.sessions.codec import UNRECORDABLE
from workbench.sessions.header import FORMAT, FORMAT_VERSION, SessionHeader
from workbench.sessions.history import is_error
from workbench.sessions.log import CHUNK, DELTA_LINE, EventLog, FoldBatcher
from workbench.sessions.summary_line import MARKER as SUMMARY_MARKER
from workbench.sessions.summary_line import is_summary_line
from workbench.sessions.workspace_records import MARKERS, parse_record_line


class SessionError(ValueError):
    """The file cannot be read as a session; `str()` says why in one line."""


@dataclass
class Session:
    """A session read from disk."""

    path: Path
    header: SessionHeader
    events: Sequence[Any] = field(default_factory=list)
    """Every event, in order, as the bus carried them (pydantic models): an `EventLog`,
    which decodes them from the file when they are asked for."""
    warnings: list[str] = field(default_factory=list)
    torn: bool = False
    """The last line was incomplete and was skipped."""
    records: list[tuple[int, int]] = field(default_factory=list)
    """The workspace checkpoint records (`sessions.workspace_records`), kept apart from
    the events: (position: how many events came before it, where its line starts)."""

    @property
    def stamps(self) -> Sequence[float]:
        """When each event was written (epoch ms), parallel to `events`."""
        events = self.events
        return events.stamps if isinstance(events, EventLog) else [0.0] * len(events)


def read_session(path: Path | str, on_batch: Callable[[list[Any]], None] | None = None) -> Session:
    """Read and validate the session at `path`: every line is checked now, and what is
    kept is where each event is (see `EventLog`), not the events.

    Args:
        on_batch: given the events as they are read, in batches for the view fold
            (`FoldBatcher`), so a reader that folds them all needs one pass, not two.

    Raises:
        SessionError: unreadable, not a session, unknown version, or corrupt in the middle.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle, _young_collections_only():
        first = handle.readline()
        header = _header(path, first, complete=first.endswith(b"\n"))
        session = Session(path, header, EventLog(path, sorted(_known_types())))
        _index(session, handle, len(first), on_batch)
    return session


@contextmanager
def _young_collections_only() -> Iterator[None]:
    """Collect only the objects made since the last chunk, once a chunk, while reading.

    Reading makes next to no garbage cycles (a few objects for a million events), but
    what the fold builds stays, and the collector's usual schedule walks it again and
    again as it grows: 40% of opening a long session in replay. Collecting the
    youngest generation after each chunk (`_index`) walks each new object once and
    still frees any cycle a chunk made."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _index(
    session: Session, handle: Any, offset: int, on_batch: Callable[[list[Any]], None] | None
) -> None:
    """Check every event line from `offset` on and note where each one is.

    A session is mostly delta lines, so they are handled a chunk at a time by C calls
    (split, match, measure, extend); only the other lines, and the deltas the fold
    is given, take a step of Python each."""
    log = session.events
    assert isinstance(log, EventLog)
    batcher = FoldBatcher(keep=on_batch is not None)
    delta_code = log.code("message_update")
    fullmatch = DELTA_LINE.fullmatch
    number = 1  # the header's line
    tail = None  # the file's last event, when it is not a delta
    pending = b""
    chunk = handle.read(CHUNK)
    while chunk:
        following = handle.read(CHUNK)  # read ahead: is this chunk the file's last?
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        if not following and pending:  # a last line without its newline
            lines.append(pending)
            pending = b""
        starts = list(accumulate(map((1).__add__, map(len, lines)), initial=offset))
        offset = starts.pop()
        final = len(lines) - 1  # the file's last event line, if this chunk is its last
        while not following and final > 0 and SUMMARY_MARKER in lines[final]:
            final -= 1
        matches = list(map(fullmatch, lines))
        codes = bytearray((delta_code,)) * len(lines)
        errors = bytearray(len(lines))
        skipped: list[int] = []
        requests: list[tuple[int, Any]] = []
        for i, match in enumerate(matches):
            if match is not None:
                if batcher.keep:
                    batcher.delta(match)
                continue
            raw = lines[i]
            last = not following and i == len(lines) - 1
            if SUMMARY_MARKER in raw and _is_summary(raw):
                skipped.append(i)
                continue
            is_record = any(marker in raw for marker in MARKERS)
            if is_record and _is_record(session, raw, number + i + 1):
                session.records.append((len(log.offsets) + i - len(skipped), starts[i]))
                skipped.append(i)
                continue
            event = _decode(session, batcher, raw, number + i + 1, last) if raw.strip() else None
            if event is None:
                skipped.append(i)
            else:
                codes[i] = log.code(event.type)
                errors[i] = is_error(event)
                tail = event if not following and i == final else None
                if event.type == "provider_request" and batcher.keep:
                    requests.append((i, batcher.decoder.expander.request))
        for i in reversed(skipped):
            del starts[i], codes[i], errors[i]
        for i, request in requests:  # the fold holds them: a jump back reuses them
            log.requests[len(log) + i - bisect(skipped, i)] = request
        log.offsets.extend(starts)
        log.codes += codes
        log.errors += errors
        number += len(lines)
        if on_batch is not None:
            on_batch(batcher.take())
        gc.collect(0)
        chunk = following
    if tail is not None and on_batch is not None:  # replay opens at the end, showing it
        log.remember(len(log) - 1, tail)


def _is_summary(raw: bytes) -> bool:
    """Whether the line is a summary line (`sessions.summary_line`): not an event."""
    try:
        return is_summary_line(loads(raw, LINE_DEPTH))
    except ValueError:  # torn or corrupt: reported as any other line is
        return False


def _is_record(session: Session, raw: bytes, number: int) -> bool:
    """Whether the line is a workspace checkpoint record (a bad one is reported and
    counts as one: it is skipped)."""
    try:
        line = loads(raw, LINE_DEPTH)
    except ValueError:  # torn or corrupt: reported as any other line is
        return False
    try:
        return isinstance(line, dict) and parse_record_line(line) is not None
    except ValidationError as exc:
        session.warnings.append(
            f"{session.path.name}:{number}: a bad workspace record ({_short(exc)}); skipped it"
        )
        return True


def _decode(session: Session, batcher: FoldBatcher, raw: bytes, number: int, last: bool) -> Any:
    """The event of a line that is not a delta; None for one skipped (with a warning)."""
    path = session.path
    try:
        return batcher.add(raw)
    except JsonDepthError as exc:
        session.warnings.append(f"{path.name}:{number}: {exc}; skipped it")
        return None
    except (ValueError, ValidationError) as exc:
        if last:
            session.torn = True
            session.warnings.append(
                f"{path.name}:{number}: the last line is incomplete ({len(raw)} bytes: "
                "the recording was cut off); skipped it"
            )
            return None
        unknown = _unknown_type(raw)
        if unknown == UNRECORDABLE:
            session.warnings.append(f"{path.name}:{number}: {_unrecordable(raw)}; skipped it")
            return None
        if unknown is not None:
            session.warnings.append(
                f"{path.name}:{number}: unknown event type {unknown!r} "
                "(a newer workbench?); skipped it"
            )
            return None
        raise SessionError(f"{path}:{number}: not a valid event line: {_short(exc)}") from None


def _header(path: Path, raw: bytes, *, complete: bool) -> SessionHeader:
    if not raw.strip():
        raise SessionError(f"{path} is empty: not a session file")
    try:
        data = loads(raw, LINE_DEPTH)
    except JsonDepthError as exc:
        raise SessionError(f"{path}: the header line is {exc}") from None
    except ValueError:
        if not complete:
            raise SessionError(
                f"{path} has no complete header line (cut off while starting)"
            ) from None
        raise SessionError(f"{path} is not a session file (its first line is not JSON)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError(f"{path} is not an agent-workbench session file")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"{path} has an unknown session format version {version!r}")
    if version > FORMAT_VERSION:
        writer = data.get("workbench_version", "a newer workbench")
        raise SessionError(
            f"{path} uses session format version {version} (written by workbench {writer}); "
            f"this workbench reads version {FORMAT_VERSION}: upgrade agent-workbench to open it"
        )
    try:
        return SessionHeader.model_validate(data)
    except ValidationError as exc:
        raise SessionError(f"{path} has a bad header: {_short(exc)}") from None


def _unknown_type(raw: bytes) -> str | None:
    """The event's type when it is one this workbench has no model for."""
    try:
        kind = loads(raw, LINE_DEPTH)["event"]["type"]
    except (ValueError, KeyError, TypeError):
        return None
    return kind if isinstance(kind, str) and kind not in _known_types() else None


def _unrecordable(raw: bytes) -> str:
    """What the recorder wrote in place of an event it could not write."""
    event = loads(raw, LINE_DEPTH)["event"]
    return f"a {event.get('event_type')} event could not be recorded ({event.get('error')})"


@cache
def _known_types() -> frozenset[str]:
    union = get_args(BusEvent)[0]
    return frozenset(cls.model_fields["type"].default for cls in get_args(union))


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {err['msg']}" if where else str(err["msg"])
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


PEEK_LINES = 200
"""Lines `peek_session` reads past the header looking for the first prompt."""


def peek_session(path: Path | str) -> tuple[SessionHeader, str]:
    """The header (checked as `read_session` checks it) and the first user message's
    text, reading only the start of the file: collecting a folder of sessions (each
    pytest-xdist worker collects every item) must not read every file whole.

    Raises:
        SessionError: the file is missing, unreadable or not a session.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            first = handle.readline()
            header = _header(path, first, complete=first.endswith(b"\n"))
            for _ in range(PEEK_LINES):
                raw = handle.readline()
                if not raw:
                    break
                if b'"message_end"' not in raw or b'"user"' not in raw:
                    continue
                try:
                    event = loads(raw, LINE_DEPTH).get("event", {})
                except ValueError:
                    continue
                message = event.get("message") if isinstance(event, dict) else None
                if isinstance(message, dict) and message.get("role") == "user":
                    content = message.get("content")
                    if isinstance(content, str):
                        return header, content
                    if isinstance(content, list):
                        parts = [c.get("text", "") for c in content if isinstance(c, dict)]
                        return header, "".join(p for p in parts if isinstance(p, str))
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
    return header, ""
