"""The MCP SDK's logging and warnings, kept off the terminal.

The SDK logs protocol noise (a server's stray lines, malformed notifications) with
tracebacks, and warns on stderr about capabilities the 2026-07-28 revision deprecates
(logging, roots, sampling) that servers still use; either would tear through the
full-screen app. Importing this module installs the handler once: each record goes, as
one line, to the log of the connection whose task logged it (`serving`).
"""

from __future__ import annotations

import logging
import warnings
from contextvars import ContextVar
from typing import Protocol

from mcp.shared.exceptions import MCPDeprecationWarning


class Noted(Protocol):
    def note(self, line: str) -> None: ...


serving: ContextVar[Noted | None] = ContextVar("mcp_serving", default=None)
"""The connection whose task is running (set by `McpConnection.run`)."""


class _QuietLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        connection = serving.get()
        if connection is not None and record.levelno >= logging.WARNING:
            connection.note(record.getMessage())


warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

for _name in ("mcp", "client"):  # the SDK's session logs under "client"
    _logger = logging.getLogger(_name)
    _logger.addHandler(_QuietLog())
    _logger.propagate = False
