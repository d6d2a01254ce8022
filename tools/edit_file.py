"""`edit_file`: exact-text replacements in one file, all or nothing.

Each edit names text that must occur exactly once in the file as it was before
the call (so edits do not depend on each other's order) and must not overlap
another edit. If any edit fails, nothing is written. Line endings (CRLF or LF)
and a UTF-8 BOM are kept as they were. The result carries a unified diff in
`details` for the inspector.

Models often send the single-edit form `{path, old_text, new_text}` (pi's older
edit tool had that shape); `prepare_arguments` folds it, and camelCase keys, into
the `edits` list before validation, as pi's own edit tool does.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from pydantic import BaseModel, Field

from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.tools.workspace import Workspace

_KEYS = {"oldText": "old_text", "newText": "new_text"}

MAX_EDIT_BYTES = 10 * 1024 * 1024
"""Largest file edit_file edits: it holds the file (and the result) in memory."""


class Edit(BaseModel):
    old_text: str = Field(
        min_length=1,
        description="Exact text to replace; must occur exactly once in the file (whitespace too)",
    )
    new_text: str = Field(description="The text to put in its place")


class EditFileParams(BaseModel):
    path: str = Field(description="Path of the file to edit, relative to the workspace root")
    edits: list[Edit] = Field(
        min_length=1,
        description="Replacements, each matched against the file as it was before this call",
    )


def fold_flat_edit(args: dict[str, Any]) -> dict[str, Any]:
    """Fold `{old_text, new_text}` (or camelCase) at the top level into `edits` (pure)."""
    out = {k: v for k, v in args.items() if k not in ("old_text", "new_text", *_KEYS)}
    flat = {_KEYS.get(k, k): v for k, v in args.items() if k in ("old_text", "new_text", *_KEYS)}
    edits = out.get("edits")
    if isinstance(edits, list):
        edits = [
            {_KEYS.get(k, k): v for k, v in e.items()} if isinstance(e, dict) else e for e in edits
        ]
        out["edits"] = edits
    if not flat:
        return out if isinstance(edits, list) else dict(args)
    if edits is None:
        out["edits"] = [flat]
    elif isinstance(edits, list):
        out["edits"] = [*edits, flat]
    else:
        return dict(args)  # an "edits" we cannot extend: let validation explain it
    return out


def _apply(text: str, edits: list[Edit], shown: str) -> tuple[str, list[int]]:
    """Apply every edit to `text` (LF-normalised); returns the new text and edit start lines."""
    spans: list[tuple[int, int, int]] = []
    for i, edit in enumerate(edits):
        old = _to_lf(edit.old_text)
        count = text.count(old)
        if count == 0:
            raise ValueError(
                f"edits[{i}].old_text was not found in {shown}. It must match the file "
                "exactly, including whitespace, indentation and line breaks; read the file "
                "again and copy the text."
            )
        if count > 1:
            raise ValueError(
                f"edits[{i}].old_text occurs {count} times in {shown}; it must be unique. "
                "Include more of the surrounding lines to pick one occurrence."
            )
        start = text.index(old)
        spans.append((start, start + len(old), i))
    spans.sort()
    for (_, end_a, a), (start_b, _, b) in zip(spans, spans[1:], strict=False):
        if start_b < end_a:
            raise ValueError(
                f"edits[{a}] and edits[{b}] overlap in {shown}; merge them into one edit"
            )
    pieces: list[str] = []
    cursor = 0
    for start, end, i in spans:
        pieces += [text[cursor:start], _to_lf(edits[i].new_text)]
        cursor = end
    pieces.append(text[cursor:])
    lines = [text.count("\n", 0, start) + 1 for start, _, _ in spans]
    return "".join(pieces), lines


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _diff(old: str, new: str, shown: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{shown}",
            tofile=f"b/{shown}",
            n=3,
        )
    )


def make_edit_file(workspace: Workspace) -> AgentTool:
    """Build `edit_file` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: EditFileParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        fd, shown = workspace.text_file(
            params.path,
            refusal="edit_file only edits text",
            on_directory=", not a file",
            writable=True,
        )
        with os.fdopen(fd, "r+b") as handle:
            return _edit(handle, shown, params, signal)

    return AgentTool(
        name="edit_file",
        label="Edit file",
        description=(
            "Edit a text file by exact-text replacement. Each edit's old_text must occur "
            "exactly once in the file (whitespace included); all edits apply or none do."
        ),
        parameters=EditFileParams,
        execute=execute,
        prepare_arguments=fold_flat_edit,
        source="builtin",
    )


def _edit(handle: Any, shown: str, params: EditFileParams, signal: AbortSignal) -> AgentToolResult:
    """Apply `params.edits` to the open file (its descriptor is where it was judged)."""
    file_bytes = os.fstat(handle.fileno()).st_size
    if file_bytes > MAX_EDIT_BYTES:
        raise ValueError(
            f"{shown} is {file_bytes} bytes; edit_file edits files up to "
            f"{MAX_EDIT_BYTES // (1024 * 1024)} MB. Use run_command (e.g. sed) for larger ones."
        )
    raw = handle.read(MAX_EDIT_BYTES + 1).decode("utf-8")  # no more than the cap
    if len(raw) > MAX_EDIT_BYTES:
        raise ValueError(f"{shown} grew past {MAX_EDIT_BYTES} bytes while being edited")
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    body = raw[len(bom) :]
    crlf = "\r\n" in body and body.count("\r\n") == body.count("\n")
    before = _to_lf(body)
    after, lines = _apply(before, params.edits, shown)
    if after == before:
        raise ValueError(f"No changes made to {shown}: each new_text equals its old_text")
    signal.throw_if_aborted()
    handle.seek(0)
    handle.truncate()
    handle.write((bom + (after.replace("\n", "\r\n") if crlf else after)).encode("utf-8"))
    n = len(params.edits)
    details = {
        "path": shown,
        "edits": n,
        "diff": _diff(before, after, shown),
        "first_changed_line": min(lines),
    }
    plural = "s" if n != 1 else ""
    text = f"Edited {shown}: {n} replacement{plural} (first at line {min(lines)})."
    return AgentToolResult.text(text, details=details)
