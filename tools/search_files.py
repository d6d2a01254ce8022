"""`search_files`: a regular expression across the workspace's text files.

Each match is one `path:line: text` line, so the model can go straight to
`read_file` with an offset. Binary files, large files, ignored directories and
symlinks that lead outside the workspace are skipped, and so are files the
permission rules do not let `read_file` read (counted in `details` only, so
the model does not learn they exist; searching one by name says it is not found,
as for a missing one), or that are hard links of such a file; the result stops at
`max_results` and says so. Files are opened from the workspace's handle, never
through a link swapped in after the check (`workbench.tools.opening`).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel, Field

from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.safe_regex import Budget, compile_pattern
from workbench.tools.workspace import BINARY_SNIFF_BYTES, IGNORED_DIRS, Workspace, is_binary

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are not searched."""
MAX_LINE_CHARS = 300
"""Matched lines longer than this are shortened in the output."""
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
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


def _run(ws: Workspace, fd: int, base: str, s: _Search) -> None:
    """Search the file or directory open as `fd` (`base`: its path from the root),
    walking from that handle without following links (`os.fwalk`)."""
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        _consider(ws, base, lambda: os.dup(fd), s)
        return
    for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=fd):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in sorted(filenames):
            if s.signal.aborted or s.truncated:
                return
            rel = posixpath.normpath(posixpath.join(base, dirpath, name))
            _consider(ws, rel, _opener(ws, rel, name, dirfd), s)


def _opener(ws: Workspace, rel: str, name: str, dirfd: int) -> Callable[[], int]:
    """Opens `name` in `dirfd`; a symlink only when it leads inside, opened where it leads."""

    def open_it() -> int:
        if stat.S_ISLNK(os.lstat(name, dir_fd=dirfd).st_mode):
            return ws.open(rel, _READ)[0]  # refused (WorkspaceError) when it leads outside
        return os.open(name, _READ | _NOFOLLOW, dir_fd=dirfd)

    return open_it


def _consider(ws: Workspace, rel: str, opener: Callable[[], int], s: _Search) -> None:
    name = rel.rsplit("/", 1)[-1]
    if s.glob and not (fnmatch.fnmatch(name, s.glob) or fnmatch.fnmatch(rel, s.glob)):
        return
    if not ws.shown(ws.root / rel):
        s.files_hidden += 1
        return
    try:
        fd = opener()
    except OSError:  # a link outside, or gone
        s.files_skipped += 1
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            s.files_skipped += 1
        elif ws.hidden_inode(info):
            s.files_hidden += 1
        elif is_binary(os.pread(fd, BINARY_SNIFF_BYTES, 0)):
            s.files_skipped += 1
        else:
            s.files_searched += 1
            _search_lines(fd, rel, s)
    except OSError:
        s.files_skipped += 1
    finally:
        os.close(fd)


def _search_lines(fd: int, rel: str, s: _Search) -> None:
    with os.fdopen(fd, encoding="utf-8", errors="replace", closefd=False) as handle:
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
        fd, shown = workspace.open(params.path, _READ)
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode) and not workspace.shown(
                workspace.root / shown
            ):
                raise workspace.not_found(shown)  # as if missing: its existence is hidden too
            search = _Search(
                compiled, Budget(SEARCH_TIME_LIMIT), signal, params.glob, params.max_results
            )
            await _in_thread_until_abort(signal, _run, workspace, fd, shown, search)
        finally:
            os.close(fd)
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
            "path": shown,
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
