"""A stdio MCP server's stderr: a temporary file while it runs, its last lines after.

Messages about a server that failed or died end with what it last wrote there, and the
status view shows those lines even after the server stopped.
"""

from __future__ import annotations

import os
import tempfile
from typing import TextIO

STDERR_TAIL_LINES = 6
STDERR_KEPT_LINES = 500
"""How many of a server's last stderr lines the status view shows (after it stopped too)."""
_READ_BACK = 256 * 1024
"""How many bytes from the end of the file are read for its last lines."""


class ServerStderr:
    """Where a stdio server's stderr goes, and its last lines."""

    def __init__(self) -> None:
        self._file: TextIO | None = None
        self._last: list[str] = []

    def open(self) -> TextIO:
        """A fresh file for a server about to start."""
        self._file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        return self._file

    def adopt(self, file: TextIO) -> TextIO:
        """`file`, where a server started early writes (see `early`)."""
        self._file = file
        return file

    def close(self) -> None:
        """Keep the last lines and close the file (the server has stopped)."""
        if self._file is not None:
            self._last = self.lines(STDERR_KEPT_LINES)
            self._file.close()
            self._file = None

    def lines(self, count: int = STDERR_TAIL_LINES) -> list[str]:
        """The last non-blank lines the server wrote to stderr (kept after it stopped)."""
        if self._file is None:
            return self._last[-count:]
        try:
            fd = self._file.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, _READ_BACK, max(0, size - _READ_BACK)).decode("utf-8", "replace")
        except (OSError, ValueError):
            return []
        return [line for line in data.splitlines() if line.strip()][-count:]

    def tail(self) -> str:
        """The last lines the server wrote to stderr, as a suffix for a message."""
        lines = self.lines()
        if not lines:
            return ""
        return "\nIts last stderr lines:\n" + "\n".join(f"  {line}" for line in lines)
