"""The wire formats the proxy reads and rewrites, one module each (no I/O here)."""

from __future__ import annotations

from workbench.proxy.formats.base import WireFormat
from workbench.proxy.formats.chat import CHAT
from workbench.proxy.formats.responses import RESPONSES


def format_for(method: str, path: str) -> WireFormat | None:
    """The format of a judged endpoint (`path` normalised, without its `/v1`); None if the
    path is not one."""
    if method != "POST":
        return None
    if path == "/chat/completions":
        return CHAT
    if path == "/responses":
        return RESPONSES
    return None
