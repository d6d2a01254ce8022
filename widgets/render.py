"""Rich renderables for the workbench's data: status badges, JSON, argument diffs.

Everything untrusted is appended to `Text` objects as plain strings (after
`literal`), never parsed as markup, so model and tool output show exactly as sent.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.text import Text

from workbench.sanitize import literal
from workbench.view.records import CallStatus, ToolCallRecord

STATUS_STYLE: dict[str, tuple[str, str]] = {
    "streaming": ("writing", "dim"),
    "requested": ("requested", "dim"),
    "invalid": ("invalid", "bold red"),
    "validated": ("validated", "blue"),
    "awaiting_approval": ("awaiting approval", "bold magenta"),
    "paused": ("paused", "bold yellow"),
    "running": ("running", "bold cyan"),
    "after_hook": ("after hook", "cyan"),
    "done": ("done", "green"),
    "error": ("error", "bold red"),
    "denied": ("denied", "bold magenta"),
    "aborted": ("aborted", "bold #ff8700"),
}

STATUS_ICON: dict[str, str] = {
    "streaming": "…",
    "requested": "○",
    "invalid": "✗",
    "validated": "◇",
    "awaiting_approval": "?",
    "paused": "‖",
    "running": "▶",
    "after_hook": "▶",
    "done": "✓",
    "error": "✗",
    "denied": "⊘",
    "aborted": "■",
}


def status_label(status: CallStatus) -> tuple[str, str]:
    """A status's icon and name, and its Rich style definition."""
    label, style = STATUS_STYLE[status]
    return f"{STATUS_ICON[status]} {label}", style


def status_badge(status: CallStatus) -> Text:
    return Text(*status_label(status))


def format_ms(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1:
        return f"{ms * 1000:.0f}µs"
    if ms < 1000:
        return f"{ms:.0f}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    return f"{int(ms // 60_000)}m{int(ms % 60_000 / 1000):02d}s"


WAIT_SHOWN_MS = 1.0
"""Waits shorter than this are the batch's own bookkeeping, not worth a word."""


def format_times(times: tuple[float, float] | None) -> str:
    """A call's working time, and its waiting when it waited: `9ms +3m02s wait`."""
    if times is None:
        return ""
    work, wait = times
    return format_ms(work) + (f" +{format_ms(wait)} wait" if wait >= WAIT_SHOWN_MS else "")


def compact_json(value: Any, width: int = 80) -> str:
    text = literal(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= width else text[: width - 1] + "…"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


# -- argument stages -------------------------------------------------------------------

_ERROR_LINE = re.compile(r"^\s+- (?P<path>[^:]+): (?P<msg>.*)$")


def field_errors(error: str | None) -> dict[str, str]:
    """Per-field messages from a validation error (`  - path: problem` lines)."""
    out: dict[str, str] = {}
    for line in (error or "").splitlines():
        if m := _ERROR_LINE.match(line):
            out.setdefault(m.group("path"), m.group("msg"))
    return out


def stage_view(
    value: dict[str, Any] | None,
    previous: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    *,
    text_blocks: bool = True,
) -> Text:
    """One argument stage as pretty JSON; keys that differ from `previous` are marked.

    Added keys are green with `+`, changed keys yellow with `~`, keys dropped since
    the previous stage are listed red with `-`. A field's validation error is
    pinned under its key. With `text_blocks`, a string of several lines shows as the
    text it is, one line a row behind a bar, instead of one escaped JSON string.
    """
    if value is None:
        return Text("—", style="dim")
    out = Text()
    out.append("{\n")
    items = list(value.items())
    for i, (key, item) in enumerate(items):
        mark, style = " ", ""
        if previous is not None:
            if key not in previous:
                mark, style = "+", "green"
            elif previous[key] != item:
                mark, style = "~", "yellow"
        comma = "," if i < len(items) - 1 else ""
        out.append(f"{mark} ", style=style or "dim")
        out.append(literal(json.dumps(key, ensure_ascii=False)), style=style or "bold")
        out.append(": ")
        if text_blocks and isinstance(item, str) and "\n" in item.rstrip("\n"):
            ends = item.endswith("\n")
            lines = (item[:-1] if ends else item).split("\n")
            about = f"text, {len(lines)} lines" + (" and a final newline" if ends else "")
            out.append(f"{about}{comma}\n", style="dim italic")
            for line in lines:
                out.append("    │ ", style="dim")
                out.append(literal(line) + "\n", style=style)
        else:
            body = pretty_json(item).replace("\n", "\n    ")
            out.append(literal(body) + comma + "\n", style=style)
        for path, msg in (errors or {}).items():
            if path == key or path.startswith(f"{key}.") or path.startswith(f"{key}["):
                out.append(f"    ⚠ {literal(path)}: {literal(msg)}\n", style="bold red")
    if previous is not None:
        for key in previous:
            if key not in value:
                out.append("- ", style="red")
                out.append(
                    literal(json.dumps(key, ensure_ascii=False)) + " (dropped)\n",
                    style="red strike",
                )
    for path, msg in (errors or {}).items():
        if path == "root" or path.split(".")[0].split("[")[0] not in value:
            out.append(f"⚠ {literal(path)}: {literal(msg)}\n", style="bold red")
    out.append("}")
    return out


def details_view(details: Any, *, json_form: bool = False) -> Text:
    """A result's details: a raising tool's traceback and a diff (edit_file's) as what
    they are, the rest as JSON (with `json_form`, the diff stays in the JSON)."""
    out = Text()
    trace = details.get("traceback") if isinstance(details, dict) else None
    if isinstance(trace, str):  # a raising tool's last frames in its own code
        out.append("traceback (most recent call last)\n", style="bold")
        out.append(literal(trace) + "\n", style="red")
        details = {k: v for k, v in details.items() if k != "traceback"}
    diff = details.get("diff") if isinstance(details, dict) else None
    if isinstance(diff, str) and not json_form:
        out.append("diff\n", style="bold")
        out.append_text(diff_view(diff))
        out.append("\n")
        details = {k: v for k, v in details.items() if k != "diff"}
    if details not in (None, {}):
        out.append("details ", style="bold dim")
        out.append(literal(pretty_json(details)) + "\n", style="dim")
    return out


def diff_view(diff: str) -> Text:
    """A unified diff, coloured: additions green, removals red, hunk heads cyan."""
    out = Text()
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(literal(line) + "\n", style=style)
    out.rstrip()
    return out


def raw_view(record: ToolCallRecord) -> Text:
    """The raw argument string exactly as the model sent it; a parse error is marked."""
    if record.raw is None:
        return Text("(the provider sent no raw string)", style="dim")
    text = Text(literal(record.raw) or '""')
    if record.failed_stage == "parse" and record.arg_error:
        text.append("\n⚠ " + literal(record.arg_error.splitlines()[0]), style="bold red")
    return text
