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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field

from tools.workspace import IGNORED_DIRS, Workspace, is_binary, read_sample
from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.safe_regex import Budget, compile_pattern

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are not searched."""
MAX_LINE_CHARS = 300
"""Matched lines longer than this are shortened in the output."""
SEARCH_TIME_LIMIT = 10.0
"""Seconds of matching one search may take in all (one line may take `MATCH_TIMEOUT`)."""


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
    regex: Any
    budget: Budget
    signal: AbortSignal
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
                if s.signal.aborted:
                    return
                if s.budget.search(s.regex, line):
                    if len(s.matches) >= s.limit:
                        s.truncated = True
                        return
                    text = line.rstrip("\r\n")
                    if len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + "…"
                    s.matches.append(f"{rel}:{number}: {text}")
    except OSError:
        s.files_skipped += 1


def _run(ws: Workspace, root: Path, s: _Search) -> None:
    for path in _candidates(ws, root):
        if s.signal.aborted or s.truncated:
            return
        rel = ws.display(path)
        if s.glob and not (fnmatch.fnmatch(path.name, s.glob) or fnmatch.fnmatch(rel, s.glob)):
            continue
        if not ws.shown(path):
            s.files_hidden += 1
            continue
        _search_file(ws, path, rel, s)


async def _in_thread_until_abort(signal: AbortSignal, fn: Any, *args: Any) -> None:
    """Run `fn` in a worker thread; an abort returns at once. The abandoned thread
    stops by itself at its next line (it checks the signal, and one match is bounded)."""
    with anyio.CancelScope() as scope:
        remove = signal.add_listener(lambda _reason: scope.cancel())
        try:
            await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
        finally:
            remove()


def make_search_files(workspace: Workspace) -> AgentTool:
    """Build `search_files` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: SearchFilesParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        compiled = compile_pattern(params.pattern, params.ignore_case)
        root = workspace.resolve(params.path)
        if not root.exists():
            raise FileNotFoundError(f"Path not found: {params.path}")
        search = _Search(
            compiled, Budget(SEARCH_TIME_LIMIT), signal, params.glob, params.max_results
        )
        await _in_thread_until_abort(signal, _run, workspace, root, search)
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
