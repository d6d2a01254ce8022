"""A stdio MCP server's stderr: a temporary file while it runs, its last lines after.

Messages about a server that failed or died end with what it last wrote there, and the
status view shows those lines even after the server stopped. A server may print a
secret it was given (its env, its headers): the text read back is redacted as one
block (`workbench.redact`), so a secret split across lines or printed reversed is
masked too, before any line of it is shown, recorded or put in a message.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
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
        self._last = ""
        """The text of the last lines, kept when the server stopped (not yet redacted)."""

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
            self._last = "\n".join(_nonblank(self._text())[-STDERR_KEPT_LINES:])
            self._file.close()
            self._file = None

    def lines(
        self, count: int = STDERR_TAIL_LINES, redact: Callable[[str], str] | None = None
    ) -> list[str]:
        """The last non-blank lines the server wrote to stderr (kept after it stopped),
        with `redact` applied to their text as a whole."""
        text = self._text()
        return _nonblank(redact(text) if redact is not None else text)[-count:]

    def _text(self) -> str:
        if self._file is None:
            return self._last
        try:
            fd = self._file.fileno()
            size = os.fstat(fd).st_size
            return os.pread(fd, _READ_BACK, max(0, size - _READ_BACK)).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def tail(self, redact: Callable[[str], str] | None = None) -> str:
        """The last lines the server wrote to stderr, as a suffix for a message."""
        lines = self.lines(redact=redact)
        if not lines:
            return ""
        return "\nIts last stderr lines:\n" + "\n".join(f"  {line}" for line in lines)


def _nonblank(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]
