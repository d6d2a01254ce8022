"""The wire formats the proxy reads and rewrites, one module each (no I/O here)."""

from __future__ import annotations

from workbench.proxy.formats.anthropic import ANTHROPIC
from workbench.proxy.formats.base import WireFormat
from workbench.proxy.formats.chat import CHAT
from workbench.proxy.formats.gemini import GEMINI, PATH, VERBS
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
    if path == "/messages":
        return ANTHROPIC
    match = PATH.match(path)
    if match and match.group("verb") in VERBS:
        return GEMINI
    return None


def tool_less(method: str, path: str) -> str | None:
    """How to send the key for a known endpoint whose answer can hold no tool call (a
    model list, a token count): forwarded unjudged without `--pass-through`. None: not one."""
    if method in ("GET", "HEAD") and (path == "/models" or path.startswith("/models/")):
        return "bearer"
    if method == "POST" and path == "/messages/count_tokens":
        return ANTHROPIC.auth
    match = PATH.match(path)
    if method == "POST" and match and match.group("verb") == "countTokens":
        return GEMINI.auth
    return None
