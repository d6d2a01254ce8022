"""What went wrong with an MCP server, in words: errors, HTTP refusals, garbled lines.

Nothing here talks to a server; `client.py` uses these to turn the SDK's exceptions
into messages that name the server, what happened and what to try.
"""

from __future__ import annotations

from typing import Any

from mcp.client.auth import OAuthFlowError
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from workbench.mcp.config import McpServerConfig

CONNECTION_CLOSED = -32000
"""The code the SDK gives a request whose connection closed under it."""


class Unreadable(Exception):
    """A server's answer while starting could not be parsed (it is lost)."""


class InputMissing(Exception):
    """A server's `${input:ID}` was not given (`str()` names it and how to give it)."""


class McpCallError(Exception):
    """A call to an MCP tool failed; `str()` says why, `details` go to the inspector."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


def http_failure(
    url: str, status: int, reason: str, *, sse: bool = False, auth: str = "none"
) -> str:
    """What an HTTP error status from an MCP endpoint means, and what to try (`auth`:
    how the workbench gave credentials: "none", "header" or "oauth")."""
    head = f"{url} answered HTTP {status}{f' {reason}' if reason else ''}"
    if status == 401 and auth == "header":
        hint = "the server refused the Authorization header it was given"
    elif status == 401 and auth == "oauth":
        hint = "the server refused the token its OAuth authorization gave"
    elif status == 401:
        hint = (
            "the server wants credentials: remove oauth = false from its config table to "
            "authorize with OAuth, or give it a header, e.g. "
            'headers = { Authorization = "Bearer ..." }'
        )
    elif status == 403:
        hint = "the server refused the credentials it was given (check the headers)"
    elif status in (404, 405) and sse:
        hint = (
            "there is no SSE MCP endpoint at this path (such servers usually serve /sse; "
            "a URL ending in /mcp is streamable HTTP: use --mcp-url)"
        )
    elif status in (404, 405):
        hint = (
            "there is no streamable-HTTP MCP endpoint at this path (such servers usually "
            "serve /mcp; a URL ending in /sse is the older SSE transport: use --mcp-sse)"
        )
    elif status >= 500:
        hint = "the server failed while answering (see its own log)"
    else:
        hint = "the server did not accept the MCP request"
    return f"{head}: {hint}"


def is_connect_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("ConnectError", "ConnectTimeout") or isinstance(
        exc, ConnectionError
    )


def reason_text(reason: object) -> str:
    """The text sent as a cancellation's reason: the user's, or what aborted the call."""
    if reason is None:
        return "the user aborted the call"
    if isinstance(reason, BaseException):
        return describe(reason)
    return str(reason)


def leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def is_notification(exc: Exception) -> bool:
    """Whether a message that failed to parse has a notification's shape (a method, no id)."""
    if not isinstance(exc, ValidationError) or not exc.errors():
        return False
    seen = exc.errors()[0].get("input")
    return isinstance(seen, dict) and "method" in seen and "id" not in seen


def garbage(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        seen = str(error.get("input", ""))[:80]
        return f"{error['msg']}; got {seen!r}" if seen else str(error["msg"])
    return first_line(describe(exc))[:200]


def start_failure(
    config: McpServerConfig,
    exc: BaseException,
    *,
    garbled: str | None,
    http_error: tuple[int, str] | None,
) -> str:
    """Why a server failed to start, and what to try (without its stderr lines).

    Args:
        garbled: the first line it wrote that was not JSON-RPC, if any.
        http_error: the last HTTP error status it answered with, and its reason.
    """
    if isinstance(exc, FileNotFoundError) and config.command is not None:
        return f"command not found: {config.command[0]}"
    if isinstance(exc, PermissionError) and config.command is not None:
        return f"cannot run {config.command[0]}: permission denied"
    if isinstance(exc, Unreadable):
        why = f"its answer while starting could not be read: {exc}"
        if "recursion" in str(exc):
            why += " (JSON nested too deeply: a tool's schema, probably)"
        return why
    if isinstance(exc, TimeoutError):
        why = (
            f"no answer to initialize within {config.startup_timeout:g}s "
            "(is it an MCP server speaking over "
            f"{'stdio' if config.transport == 'stdio' else 'streamable HTTP'}?)"
        )
        if garbled:
            why += f"; it wrote something that is not JSON-RPC: {garbled}"
        return why
    if isinstance(exc, InputMissing):
        return str(exc)
    if isinstance(exc, OAuthFlowError):
        why = f"its OAuth authorization failed: {exc}"
        if config.url is None or http_error is None:
            return why
        status, reason = http_error
        head = f"{config.url} answered HTTP {status}{f' {reason}' if reason else ''}"
        return f"{head}: the server wants credentials and {why}"
    if config.url is not None and http_error is not None:
        header = any(name.strip().lower() == "authorization" for name in config.headers)
        auth = "header" if header else "oauth" if config.oauth else "none"
        return http_failure(config.url, *http_error, sse=config.sse, auth=auth)
    if config.url is not None and is_connect_error(exc):
        return f"nothing answered at {config.url} ({describe(exc)}): is the server running?"
    if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
        return "it exited (or closed the connection) before answering initialize"
    return describe(exc)


def call_failure(
    server: str, tool: str, exc: MCPError, details: dict[str, Any], stderr_tail: str
) -> McpCallError:
    """The error for a `tools/call` the server answered with a JSON-RPC error (or whose
    connection closed under it: then `details["exited"]`)."""
    if exc.error.code == CONNECTION_CLOSED:
        return McpCallError(
            f"MCP server {server} died during tools/call {tool}: the connection closed "
            f"before it answered (the server process exited or crashed){stderr_tail}",
            {**details, "exited": True},
        )
    return McpCallError(
        f"MCP server {server} answered tools/call {tool} with error {exc.error.code}: "
        f"{exc.error.message}",
        {**details, "code": exc.error.code, "data": exc.error.data},
    )
