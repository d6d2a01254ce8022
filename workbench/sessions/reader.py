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

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from workbench.events import BusEvent
from workbench.json_text import LINE_DEPTH, JsonDepthError, loads
from workbench.sessions.codec import UNRECORDABLE, Decoder
from workbench.sessions.header import FORMAT, FORMAT_VERSION, SessionHeader


class SessionError(ValueError):
    """The file cannot be read as a session; `str()` says why in one line."""


@dataclass
class Session:
    """A session read from disk."""

    path: Path
    header: SessionHeader
    events: list[Any] = field(default_factory=list)
    """Every event, in order: the same objects the bus carried (pydantic models)."""
    stamps: list[float] = field(default_factory=list)
    """When each event was written (epoch ms), parallel to `events`."""
    warnings: list[str] = field(default_factory=list)
    torn: bool = False
    """The last line was incomplete and was skipped."""


def read_session(path: Path | str) -> Session:
    """Read and validate the session at `path`.

    Raises:
        SessionError: unreadable, not a session, unknown version, or corrupt in the middle.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    if not data.endswith(b"\n"):
        tail = lines[-1]
    else:
        tail = b""
        lines.pop()  # the empty piece after the final newline
    header = _header(path, lines[0] if lines else b"", complete=len(lines) > 1 or not tail)
    session = Session(path, header)
    decoder = Decoder()
    last = len(lines) - 1
    for number in range(1, len(lines)):
        raw = lines[number]
        if not raw.strip():
            continue
        try:
            line = loads(raw, LINE_DEPTH)
            if not isinstance(line, dict) or "event" not in line:
                raise ValueError("not an event line")
            event = decoder.decode(line)
        except JsonDepthError as exc:
            session.warnings.append(f"{path.name}:{number + 1}: {exc}; skipped it")
            continue
        except (ValueError, ValidationError) as exc:
            if number == last:
                session.torn = True
                session.warnings.append(
                    f"{path.name}:{number + 1}: the last line is incomplete ({len(raw)} bytes: "
                    "the recording was cut off); skipped it"
                )
                break
            unknown = _unknown_type(raw)
            if unknown == UNRECORDABLE:
                session.warnings.append(
                    f"{path.name}:{number + 1}: {_unrecordable(raw)}; skipped it"
                )
                continue
            if unknown is not None:
                session.warnings.append(
                    f"{path.name}:{number + 1}: unknown event type {unknown!r} "
                    "(a newer workbench?); skipped it"
                )
                continue
            raise SessionError(
                f"{path}:{number + 1}: not a valid event line: {_short(exc)}"
            ) from None
        session.events.append(event)
        ts = line.get("ts")
        session.stamps.append(float(ts) if isinstance(ts, (int, float)) else 0.0)
    return session


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
