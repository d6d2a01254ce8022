"""`read_file`: a text file's lines, in ranges, under a size cap.

A model that reads a whole large file floods its context, so a read stops at
`MAX_LINES` lines or `MAX_BYTES` bytes and says so in a notice that names the
`offset` to continue from. Binary files are refused rather than dumped as
mojibake. A missing file raises, so the loop reports an error result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.tools.workspace import Workspace

MAX_LINES = 2000
"""Most lines one read returns."""
MAX_BYTES = 50 * 1024
"""Most bytes (UTF-8) one read returns."""
PIECE_CHARS = MAX_BYTES + 1
"""Most of one line held in memory (enough to know it is over MAX_BYTES)."""
MAX_SCAN_CHARS = 64 * 1024 * 1024
"""How far past the lines shown a read goes on counting the file's lines."""


class ReadFileParams(BaseModel):
    path: str = Field(description="Path of the file, relative to the workspace root")
    offset: int | None = Field(
        default=None, ge=1, description="Line number to start reading from (1-based)"
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines to read")


@dataclass
class _Window:
    """The lines one read returns, and why it stopped."""

    lines: list[str]
    total: int
    cut_by: str | None = None
    """"lines" (MAX_LINES), "bytes" (MAX_BYTES), "line" (one over-long line) or None."""
    counted: bool = True
    """False when the file went on past MAX_SCAN_CHARS after the window: `total` is
    then the lines counted so far, not all of them."""

    def take(self, line: str, size: int) -> int:
        """Add `line` if it fits in MAX_BYTES (`size` so far); returns the new size."""
        encoded = len(line.encode("utf-8"))
        if size + encoded > MAX_BYTES:
            if not self.lines:
                self.lines.append(line.encode("utf-8")[:MAX_BYTES].decode("utf-8", "ignore"))
                self.cut_by = "line"
            else:
                self.cut_by = "bytes"
            return size
        self.lines.append(line)
        return size + encoded


def _read_window(fd: int, start: int, want: int) -> _Window:
    """Lines `start`.. (1-based) up to `want` of them, within the byte cap.

    The file is read in pieces of at most PIECE_CHARS, so memory stays small
    whatever the file's shape (a 2 GB file without a newline is one huge line);
    after the window, lines are counted for MAX_SCAN_CHARS more at most.
    """
    window = _Window([], 0)
    size = 0
    line: str | None = None  # the window's line being read, at most PIECE_CHARS of it
    continuing = False
    scanned_after = 0
    with os.fdopen(fd, encoding="utf-8", errors="replace", newline="", closefd=False) as handle:
        while piece := handle.readline(PIECE_CHARS):
            if not continuing:
                window.total += 1
            continuing = not piece.endswith(("\n", "\r"))
            full = window.cut_by is not None or len(window.lines) >= want
            if window.total >= start and not full:
                line = piece if line is None else line + piece[: PIECE_CHARS - len(line)]
                if not continuing:
                    size = window.take(line, size)
                    line = None
            elif full:
                scanned_after += len(piece)
                if scanned_after > MAX_SCAN_CHARS:
                    window.counted = False
                    break
    if line is not None:  # the file ended inside the window's last line
        window.take(line, size)
    if window.cut_by is None and len(window.lines) >= MAX_LINES and want == MAX_LINES:
        if window.total > start + len(window.lines) - 1:
            window.cut_by = "lines"
    return window


def _notice(w: _Window, start: int, end: int, file_bytes: int) -> str | None:
    if w.cut_by == "line":
        return (
            f"[Line {start} is longer than the {MAX_BYTES // 1024}KB limit; showing its start "
            f"only. Use run_command (e.g. cut or head -c) to see the rest.]"
        )
    if not w.counted:
        return (
            f"[Showing lines {start}-{end}; the file goes on ({file_bytes} bytes in all; its "
            f"lines were counted only {MAX_SCAN_CHARS // (1024 * 1024)} MB past these). "
            f"Use offset={end + 1} to continue.]"
        )
    if end >= w.total:
        return None
    if w.cut_by in ("bytes", "lines"):
        limit = f"{MAX_BYTES // 1024}KB" if w.cut_by == "bytes" else f"{MAX_LINES} lines"
        return (
            f"[Showing lines {start}-{end} of {w.total} ({limit} limit). "
            f"Use offset={end + 1} to continue.]"
        )
    return f"[{w.total - end} more lines in file. Use offset={end + 1} to continue.]"


def make_read_file(workspace: Workspace) -> AgentTool:
    """Build `read_file` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: ReadFileParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        fd, shown = workspace.text_file(
            params.path,
            refusal="read_file only reads text",
            on_directory="; use list_directory to see what it contains",
        )
        start = params.offset or 1
        want = min(params.limit or MAX_LINES, MAX_LINES)
        try:
            window = _read_window(fd, start, want)
            file_bytes = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if window.total == 0:
            details = {"path": shown, "total_lines": 0, "truncated": False}
            return AgentToolResult.text("[The file is empty]", details=details)
        if start > window.total:
            raise ValueError(f"offset {start} is past the end of {shown} ({window.total} lines)")
        end = start + len(window.lines) - 1
        text = "".join(window.lines)
        notice = _notice(window, start, end, file_bytes)
        if notice:
            text = (text if text.endswith("\n") else text + "\n") + "\n" + notice
        details = {
            "path": shown,
            "start_line": start,
            "end_line": end,
            "total_lines": window.total if window.counted else None,
            "truncated": notice is not None,
            "truncated_by": window.cut_by,
        }
        return AgentToolResult.text(text, details=details)

    return AgentTool(
        name="read_file",
        label="Read file",
        description=(
            "Read a text file in the workspace. Returns at most "
            f"{MAX_LINES} lines or {MAX_BYTES // 1024}KB; use offset and limit to read "
            "other parts of long files. Binary files are refused."
        ),
        parameters=ReadFileParams,
        execute=execute,
        source="builtin",
    )
