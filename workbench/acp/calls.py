"""One ACP tool call as the agent reports it, and how the workbench names and shows it.

An ACP agent announces a call (`tool_call`: an id, a title, a kind, maybe its raw
input and locations), updates it (`tool_call_update`: status, content, raw output),
and may ask the client's permission for it (`session/request_permission`). Each
call here is an `AcpCall` that collects those reports; the loop sees it as a call
of a *foreign* tool named as rules name it (`rule_name`).

Content is shown as text: a text block as it is, a diff as a unified diff, a
terminal as its output (when the terminal is the client's own, live).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from workbench.agent.clock import now_ms

FINAL_STATUSES = frozenset({"completed", "failed"})
NOT_REPORTED = "not reported"


def rule_name(kind: str | None, meta: Any) -> str:
    """The name rules and breakpoints use for a call: the agent's own tool name when it
    gives one in `_meta` (Claude Code's adapter: `_meta.claudeCode.toolName`, e.g.
    `Bash`), else the call's ACP kind (`execute`, `edit`, `read`, ...), else `other`."""
    if isinstance(meta, dict):
        for value in meta.values():
            name = value.get("toolName") if isinstance(value, dict) else None
            if isinstance(name, str) and name.strip():
                return name.strip()
        name = meta.get("toolName")
        if isinstance(name, str) and name.strip():
            return name.strip()
    return kind or "other"


def as_arguments(raw_input: Any) -> dict[str, Any]:
    """The call's raw input as the arguments rules judge: its fields when it is an
    object, else the whole value under `input`."""
    if raw_input is None:
        return {}
    if isinstance(raw_input, dict):
        return raw_input
    return {"input": raw_input}


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A diff block as a unified diff (a new file: from /dev/null)."""
    before = (old or "").splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    name = path.lstrip("/")
    lines = difflib.unified_diff(
        before, after, "/dev/null" if old is None else f"a/{name}", f"b/{name}", lineterm=""
    )
    return "\n".join(line.rstrip("\n") for line in lines)


def content_text(
    items: list[dict[str, Any]],
    terminal_output: Callable[[str], str | None],
    shown: Callable[[str], str] = str,
) -> str:
    """The call's content (as JSON) as one text: texts, diffs (their paths as `shown`
    gives them), terminals' output."""
    parts: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "diff":
            parts.append(
                unified_diff(
                    shown(str(item.get("path"))), item.get("oldText"), item.get("newText") or ""
                )
            )
        elif kind == "terminal":
            terminal = str(item.get("terminalId"))
            output = terminal_output(terminal)
            parts.append(
                output
                if output is not None
                else f"[terminal {terminal}: its output stays with the agent]"
            )
        elif kind == "content":
            parts.append(block_text(item.get("content")))
    return "\n".join(p for p in parts if p)


def block_text(block: Any) -> str:
    """One ACP content block as text (an image or audio as a bracketed note)."""
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind in ("image", "audio"):
        return f"[{kind}: {block.get('mimeType')}]"
    if kind == "resource_link":
        return f"[resource: {block.get('uri')}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        text = resource.get("text")
        return str(text) if text is not None else f"[resource: {resource.get('uri')}]"
    return ""


def locations_text(locations: list[dict[str, Any]]) -> str:
    return ", ".join(
        f"{loc.get('path')}:{loc['line']}" if loc.get("line") is not None else str(loc.get("path"))
        for loc in locations
    )


@dataclass
class AcpCall:
    """Everything an agent reported of one tool call, and the waits the loop does on it."""

    id: str
    kind: str | None = None
    title: str | None = None
    name: str = "other"
    raw_input: Any = None
    raw_input_reported: bool = False
    raw_output: Any = None
    status: str = "pending"
    locations: list[dict[str, Any]] = field(default_factory=list)
    content: list[dict[str, Any]] = field(default_factory=list)
    meta: Any = None
    started_ms: float = field(default_factory=now_ms)
    changed: anyio.Event = field(default_factory=anyio.Event)
    """Set (and replaced) on every report: the loop's waits wake on it."""
    asked: Any = None
    """The pending `PermissionAsk` once the agent asked about this call."""
    judged: bool = False
    context: Any = None
    """The loop's `BeforeToolCallContext` for the call, once its hook is past it."""
    """The loop's hook is past this call (a request about it now is answered by rules)."""
    allowed: bool = False
    """The agent asked about it and was told to go on."""
    settled: bool = False
    """The loop has the call's input (it asked, or ran, or said its raw input)."""
    in_stream: bool = False
    """The loop's stream has opened the call (its updates may be published)."""

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def arguments(self) -> dict[str, Any]:
        return as_arguments(self.raw_input)

    @property
    def raw_json(self) -> str | None:
        """The raw input as the argument string the loop parses (None: not reported)."""
        if not self.raw_input_reported:
            return None
        return json.dumps(self.arguments, ensure_ascii=False)

    def touch(self) -> None:
        event, self.changed = self.changed, anyio.Event()
        event.set()

    def apply(self, fields: dict[str, Any]) -> list[tuple[str, str]]:
        """Take a `tool_call` / `tool_call_update`'s fields (JSON, camelCase); returns
        the history lines they make: (label, detail)."""
        lines: list[tuple[str, str]] = []
        if fields.get("_meta") is not None:
            self.meta = fields["_meta"]
        if fields.get("kind") is not None and fields["kind"] != self.kind:
            self.kind = fields["kind"]
            lines.append(("agent: kind", str(self.kind)))
        if fields.get("title") is not None and fields["title"] != self.title:
            self.title = fields["title"]
            lines.append(("agent: title", str(self.title)))
        if "rawInput" in fields and fields["rawInput"] is not None:
            changed = not self.raw_input_reported or fields["rawInput"] != self.raw_input
            self.raw_input, self.raw_input_reported = fields["rawInput"], True
            if changed:
                lines.append(("agent: raw input", json.dumps(self.arguments)[:200]))
        if fields.get("locations"):
            self.locations = list(fields["locations"])
            lines.append(("agent: locations", locations_text(self.locations)))
        if fields.get("content") is not None:
            self.content = list(fields["content"])
        if "rawOutput" in fields and fields["rawOutput"] is not None:
            self.raw_output = fields["rawOutput"]
        status = fields.get("status")
        if status is not None and status != self.status:
            self.status = status
            lines.append((f"agent: {status}", ""))
        if not self.in_stream:  # the loop's name for it is fixed once it has the call
            self.name = rule_name(self.kind, self.meta)
        self.touch()
        return lines

    def details(self) -> dict[str, Any]:
        """What the call's result carries besides its text: the agent's own account."""
        return {
            "acp": {
                "kind": self.kind or NOT_REPORTED,
                "title": self.title or NOT_REPORTED,
                "status": self.status,
                "raw_input": self.raw_input if self.raw_input_reported else NOT_REPORTED,
                "locations": self.locations,
                "raw_output": self.raw_output,
            }
        }
