"""`search_files`: a regular expression across the workspace's text files.

Each match is one `path:line: text` line, so the model can go straight to
`read_file` with an offset. Binary files, large files, ignored directories and
symlinks that lead outside the workspace are skipped, and so are files the
permission rules do not let `read_file` read (counted in `details` only, so
the model does not learn they exist); the result stops at `max_results` and
says so.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field

from tools.workspace import IGNORED_DIRS, Workspace, is_binary, read_sample
from workbench.agent import AbortSignal, AgentTool, AgentToolResult

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are not searched."""
MAX_LINE_CHARS = 300
"""Matched lines longer than this are shortened in the output."""


class SearchFilesParams(BaseModel):
    pattern: str = Field(description="Regular expression (Python syntax) to search for")
    path: str = Field(
        default=".", description="Directory or file to search, relative to the workspace root"
    )
    glob: str | None = Field(
        default=None,
        description="Only search files whose name or relative path matches this glob, e.g. '*.py'",
    )
    ignore_case: bool = Field(default=False, description="Match without regard to case")
    max_results: int = Field(default=100, ge=1, le=1000, description="Stop after this many matches")


@dataclass
class _Search:
    regex: re.Pattern[str]
    glob: str | None
    limit: int
    matches: list[str] = field(default_factory=list)
    files_searched: int = 0
    files_skipped: int = 0
    files_hidden: int = 0
    truncated: bool = False


def _candidates(ws: Workspace, root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        found.extend(Path(dirpath) / name for name in sorted(filenames))
    return found


def _search_file(ws: Workspace, path: Path, rel: str, s: _Search) -> None:
    if path.is_symlink() and not ws.real_inside(path):
        s.files_skipped += 1
        return
    try:
        too_big = path.is_file() and path.stat().st_size > MAX_FILE_BYTES
        if not path.is_file() or too_big or is_binary(read_sample(path)):
            s.files_skipped += 1
            return
        s.files_searched += 1
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if s.regex.search(line):
                    if len(s.matches) >= s.limit:
                        s.truncated = True
                        return
                    text = line.rstrip("\r\n")
                    if len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + "…"
                    s.matches.append(f"{rel}:{number}: {text}")
    except OSError:
        s.files_skipped += 1


def _run(ws: Workspace, root: Path, s: _Search, signal: AbortSignal) -> None:
    for path in _candidates(ws, root):
        if signal.aborted or s.truncated:
            return
        rel = ws.display(path)
        if s.glob and not (fnmatch.fnmatch(path.name, s.glob) or fnmatch.fnmatch(rel, s.glob)):
            continue
        if not ws.shown(path):
            s.files_hidden += 1
            continue
        _search_file(ws, path, rel, s)


def make_search_files(workspace: Workspace) -> AgentTool:
    """Build `search_files` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: SearchFilesParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        try:
            regex = re.compile(params.pattern, re.IGNORECASE if params.ignore_case else 0)
        except re.error as exc:
            raise ValueError(f"Invalid regular expression {params.pattern!r}: {exc}") from None
        root = workspace.resolve(params.path)
        if not root.exists():
            raise FileNotFoundError(f"Path not found: {params.path}")
        search = _Search(regex, params.glob, params.max_results)
        await anyio.to_thread.run_sync(_run, workspace, root, search, signal)
        signal.throw_if_aborted()
        if search.matches:
            text = "\n".join(search.matches)
        else:
            text = f"No matches for {params.pattern!r} in {search.files_searched} files."
        if search.truncated:
            text += (
                f"\n\n[Stopped after {params.max_results} matches; narrow the pattern, "
                "the path or the glob, or raise max_results.]"
            )
        details = {
            "pattern": params.pattern,
            "path": workspace.display(root),
            "matches": len(search.matches),
            "files_searched": search.files_searched,
            "files_skipped": search.files_skipped,
            "files_hidden": search.files_hidden,
            "truncated": search.truncated,
        }
        return AgentToolResult.text(text, details=details)

    return AgentTool(
        name="search_files",
        label="Search files",
        description=(
            "Search the workspace's text files for a regular expression. Returns one "
            "'path:line: text' line per match. Use glob to restrict which files are searched."
        ),
        parameters=SearchFilesParams,
        execute=execute,
        source="builtin",
    )
