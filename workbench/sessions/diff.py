"""Two recorded sessions side by side, turn by turn, call by call (`workbench diff A B`).

Each session is read (lazily: only messages, arguments, decisions and results are
decoded) into turns: the prompts given in the turn, the model's text, how its reply
ended, and its tool calls in order, each with its name, raw and validated arguments,
the permission decision, the result and any error. Turn N of A is compared with turn N
of B and call K with call K (tool call ids are not compared: a provider makes new
ones every run). Timings (each turn's and each call's) are shown but only count as a
difference past `--timing-tolerance`. Every text from the files is printed literally.

The command itself is `workbench.cli.diff`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.agent.types import text_of
from workbench.sanitize import literal
from workbench.sessions.log import of_kinds
from workbench.sessions.masks import Masks
from workbench.sessions.reader import Session

SHOWN_LINES = 40
"""Lines of a long text's diff shown before the rest is counted."""

_KINDS = (
    "turn_start",
    "turn_end",
    "message_end",
    "tool_arguments",
    "tool_execution_start",
    "permission_decision",
    "tool_execution_end",
)


@dataclass
class Call:
    name: str
    raw: str = ""
    validated: str = ""
    decision: str = ""
    result: str = ""
    error: str = ""
    duration_ms: float | None = None
    files: str = ""
    """The files the call left changed, as its checkpoint recorded them (path and
    content hash, or deleted), one per line."""


@dataclass
class Turn:
    prompts: list[str] = field(default_factory=list)
    text: str = ""
    ended: str = ""
    """How the model's reply ended (its stop reason, and error message if any)."""
    calls: list[Call] = field(default_factory=list)
    started: float = 0.0
    duration_ms: float | None = None


@dataclass
class Difference:
    """One compared field of the alignment (a difference unless `differs` is False)."""

    where: str
    """"turn 2", "turn 2, call 1 (edit_file)"."""
    what: str
    """"prompt", "model text", "raw arguments", "result", ..."""
    a: str
    b: str
    differs: bool = True


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def turns_of(session: Session) -> list[Turn]:
    """The session as turns (prompts given before the first turn start belong to it)."""
    turns: list[Turn] = []
    pending: list[str] = []
    current: Turn | None = None
    calls: dict[str, Call] = {}
    for event in of_kinds(session.events, _KINDS):
        kind = event.type
        if kind == "turn_start":
            current = Turn(prompts=pending, started=event.timestamp)
            pending = []
            turns.append(current)
        elif kind == "turn_end":
            if current is not None:
                current.duration_ms = event.timestamp - current.started
            current = None
        elif kind == "message_end":
            message = event.message
            if message.role == "user":
                (current.prompts if current is not None else pending).append(
                    text_of(message.content)
                )
            elif message.role == "assistant":
                if current is None:  # a reply outside a turn (a cut-off recording)
                    current = Turn(prompts=pending, started=event.timestamp)
                    pending = []
                    turns.append(current)
                current.text += text_of(message.content)
                error = f": {message.error_message}" if message.error_message else ""
                current.ended = f"{message.stop_reason}{error}"
                for block in message.tool_calls:
                    call = Call(block.name, raw=block.raw_arguments or _json(block.arguments))
                    calls[block.id] = call
                    current.calls.append(call)
        else:
            found = calls.get(event.tool_call_id)
            if found is not None:
                _add(found, event)
    _add_files(session, calls)
    return turns


def _add_files(session: Session, calls: dict[str, Call]) -> None:
    from workbench.sessions.checkpoints import read_records

    for _position, record in read_records(session):
        call = calls.get(getattr(record, "tool_call_id", None) or "")
        if call is None:
            continue
        lines = [
            f"{e.path}: {e.blob[:12]} ({e.size} bytes)" if e.blob else f"{e.path}: deleted"
            for e in record.files
        ]
        lines += [f"{item.path}: not recorded ({item.reason})" for item in record.left_out]
        call.files = "\n".join(filter(None, [call.files, *lines]))


def _add(call: Call, event: Any) -> None:
    kind = event.type
    if kind == "tool_arguments":
        if event.raw is not None:
            call.raw = event.raw
        if event.validated is not None:
            call.validated = _json(event.validated)
        if event.failed_stage is not None:
            call.error = f"arguments failed at {event.failed_stage}: {event.error or ''}"
    elif kind == "tool_execution_start" and not call.validated:
        call.validated = _json(event.args)
    elif kind == "permission_decision":
        by = f"{event.decided_by}" + (f" ({event.rule})" if event.rule else "")
        edited = f", arguments edited to {_json(event.edited_args)}" if event.edited_args else ""
        reason = f": {event.reason}" if event.decision == "deny" and event.reason else ""
        call.decision = f"{event.decision} by {by}{reason}{edited}"
    elif kind == "tool_execution_end":
        marks = (" [error]" if event.is_error else "") + (" [injected]" if event.injected else "")
        call.result = text_of(event.result.content) + marks
        call.duration_ms = event.duration_ms


def compare(
    a: list[Turn], b: list[Turn], tolerance: float | None = None, masks: Masks | None = None
) -> list[Difference]:
    """Every difference, in order (the first one is where the runs diverge).

    Args:
        tolerance: count a timing as a difference when it differs by more than this
            fraction (None: timings never count).
        masks: volatile text hidden in results and errors before they are compared."""
    return [row for row in align(a, b, tolerance, masks) if row.differs]


def align(
    a: list[Turn], b: list[Turn], tolerance: float | None = None, masks: Masks | None = None
) -> list[Difference]:
    """The two sessions side by side: turn N with turn N, call K with call K, one row
    for each field either side has (the same or not), in order; see `compare`."""
    mask = masks.apply if masks else str
    out: list[Difference] = []
    for index in range(max(len(a), len(b))):
        where = f"turn {index + 1}"
        if index >= len(a) or index >= len(b):
            side = "B" if index >= len(a) else "A"
            turn = (b if side == "B" else a)[index]
            out.append(Difference(where, f"only in {side}", *_only(turn, side)))
            continue
        ta, tb = a[index], b[index]
        out += _fields(
            where,
            (
                ("prompt", "\n".join(ta.prompts), "\n".join(tb.prompts)),
                ("model text", ta.text, tb.text),
                ("reply ended", ta.ended, tb.ended),
            ),
        )
        if tolerance is not None and _beyond(ta.duration_ms, tb.duration_ms, tolerance):
            out.append(Difference(where, "duration", _ms(ta.duration_ms), _ms(tb.duration_ms)))
        for k in range(max(len(ta.calls), len(tb.calls))):
            ca = ta.calls[k] if k < len(ta.calls) else None
            cb = tb.calls[k] if k < len(tb.calls) else None
            name = ca.name if ca is not None else cb.name if cb is not None else "?"
            at = f"{where}, call {k + 1} ({name})"
            if ca is None or cb is None:
                missing = "A" if ca is None else "B"
                out.append(
                    Difference(at, f"no such call in {missing}", _call_line(ca), _call_line(cb))
                )
                continue
            out += _fields(
                at,
                (
                    ("tool", ca.name, cb.name),
                    ("raw arguments", ca.raw, cb.raw),
                    ("validated arguments", ca.validated, cb.validated),
                    ("decision", ca.decision, cb.decision),
                    ("result", mask(ca.result), mask(cb.result)),
                    ("error", mask(ca.error), mask(cb.error)),
                    ("files", ca.files, cb.files),
                ),
            )
            if tolerance is not None and _beyond(ca.duration_ms, cb.duration_ms, tolerance):
                out.append(Difference(at, "duration", _ms(ca.duration_ms), _ms(cb.duration_ms)))
    return out


def _fields(where: str, fields: tuple[tuple[str, str, str], ...]) -> list[Difference]:
    return [Difference(where, what, va, vb, va != vb) for what, va, vb in fields if va or vb]


def _only(turn: Turn, side: str) -> tuple[str, str]:
    names = ", ".join(c.name for c in turn.calls) or "no calls"
    summary = f"{_short(turn.text) or '(no text)'} [{names}]"
    return ("", summary) if side == "B" else (summary, "")


def _call_line(call: Call | None) -> str:
    return "" if call is None else f"{call.name} {_short(call.raw)}"


def _short(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _beyond(a: float | None, b: float | None, tolerance: float) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) > tolerance * max(abs(a), abs(b), 1.0)


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f} ms"


def report_lines(
    a_path: Path,
    b_path: Path,
    a: list[Turn],
    b: list[Turn],
    diffs: list[Difference],
    *,
    timings: bool = True,
) -> Iterator[str]:
    """The report as plain text lines, every text from the sessions made literal."""
    yield f"A: {literal(str(a_path))} ({len(a)} turns)"
    yield f"B: {literal(str(b_path))} ({len(b)} turns)"
    if not diffs:
        yield "the same: every prompt, reply, call, decision, result and file written"
    else:
        first = diffs[0]
        yield f"first divergence: {literal(first.where)}: {first.what}"
    for item in diffs:
        yield ""
        yield f"{literal(item.where)}: {item.what}"
        yield from (f"  {line}" for line in value_lines(item.a, item.b))
    if timings:
        yield from _timings(a, b)
    yield ""
    count = len(diffs)
    yield f"{count} difference{'s' if count != 1 else ''}" if count else "no differences"


def value_lines(a: str, b: str) -> Iterator[str]:
    """Two values: on one line each when short, else a unified diff of their lines."""
    if "\n" not in a and "\n" not in b and max(len(a), len(b)) <= 200:
        yield f"A: {literal(a) if a else '(none)'}"
        yield f"B: {literal(b) if b else '(none)'}"
        return
    lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), "A", "B", lineterm="", n=1))
    for line in lines[:SHOWN_LINES]:
        yield literal(line)
    if len(lines) > SHOWN_LINES:
        yield f"… {len(lines) - SHOWN_LINES} more lines of this diff"


def _timings(a: list[Turn], b: list[Turn]) -> Iterator[str]:
    yield ""
    yield "timings (A / B; shown, not compared unless --timing-tolerance):"
    for index in range(min(len(a), len(b))):
        ta, tb = a[index], b[index]
        parts = [f"turn {index + 1}: {_ms(ta.duration_ms)} / {_ms(tb.duration_ms)}"]
        for k in range(min(len(ta.calls), len(tb.calls))):
            ca, cb = ta.calls[k], tb.calls[k]
            parts.append(f"call {k + 1} {_ms(ca.duration_ms)} / {_ms(cb.duration_ms)}")
        yield "  " + "; ".join(parts)
