"""One MCP server, connected through the official SDK and kept open in its own task.

`McpConnection.run()` is a long-lived task: it starts the server (a subprocess
over stdio, or a streamable-HTTP endpoint), answers the `initialize` handshake,
lists the tools, reports itself ready (or failed, with the reason) and then
holds the session open until `stop()`. The SDK's transports and sessions are
async context managers that must be entered and left in one task, which is why
the session lives there and tool calls, made from the agent's tasks, only send
requests through it.

Every failure becomes an `McpCallError` whose message names the server and what
happened: the server is not running, it died during the call (with the last
lines it wrote to stderr), it answered with a JSON-RPC error, an invalid result,
or a line that is not JSON-RPC at all. An aborted call is cancelled through the
SDK, which sends the protocol's `notifications/cancelled` to the server.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import IO, Any, Literal, Protocol

import anyio
import mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from workbench import __version__
from workbench.agent import AbortSignal
from workbench.mcp.config import McpServerConfig
from workbench.mcp.streams import CallCancel, CancelReasonWriter, WatchedReader, current_call

# The SDK logs protocol noise (a server's stray stdout lines, its crashes) with
# tracebacks; every such failure is reported here as a clear error instead, and
# a traceback on stderr would tear through the full-screen app.
logging.getLogger("mcp").addHandler(logging.NullHandler())

Status = Literal["starting", "ready", "failed", "exited", "closed"]


class ProgressFn(Protocol):
    """Receives a call's progress notifications (the SDK's progress callback)."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        ...


CONNECTION_CLOSED = -32000
"""The code the SDK gives a request whose connection closed under it."""
STDERR_TAIL_LINES = 6


class McpCallError(Exception):
    """A call to an MCP tool failed; `str()` says why, `details` go to the inspector."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


class McpConnection:
    """One MCP server: its status, its tools, and calls to them.

    Args:
        config: the server to start or connect to.
    """

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.status: Status = "starting"
        self.error: str | None = None
        """Why the server failed or exited (None while it is fine)."""
        self.tools: list[mcp_types.Tool] = []
        """What `tools/list` returned at startup."""
        self.server_info: str | None = None
        """The server's own name and version, from `initialize`."""
        self._session: ClientSession | None = None
        self._stderr: IO[str] | None = None
        self._stop: anyio.Event | None = None
        self._settled: anyio.Event | None = None
        self._inflight: dict[Callable[[str], None], str] = {}
        """Each call in flight: how to fail it, and the tool it calls."""
        self._ended = False
        self._stop_requested = False
        self._done: anyio.Event | None = None
        """Set when `run()` has returned (the transport is closed)."""
        self._http_error: tuple[int, str] | None = None
        """The last HTTP error status the server answered with, and its reason."""
        self.on_status: Callable[[McpConnection], None] | None = None
        """Called when the server exits on its own after it was ready (set by the hub)."""

    @property
    def name(self) -> str:
        return self.config.name

    # -- lifetime ----------------------------------------------------------------------

    async def run(self) -> None:
        """Start the server and keep the session open until `stop()` (or cancellation).

        Never raises for the server's failures: they set `status` and `error`.
        """
        self._stop = self._stop or anyio.Event()
        self._settled = self._settled or anyio.Event()
        self._done = self._done or anyio.Event()
        self._ended = False
        try:
            async with self._transport() as (read, write), ClientSession(
                WatchedReader(read, self._connection_ended),
                CancelReasonWriter(write),
                message_handler=self._on_message,
                client_info=mcp_types.Implementation(name="agent-workbench", version=__version__),
            ) as session:
                with anyio.fail_after(self.config.startup_timeout):
                    info = await session.initialize()
                    self.tools = await _list_tools(session)
                self.server_info = f"{info.server_info.name} {info.server_info.version}".strip()
                self._session = session
                self.status = "ready"
                self._settled.set()
                await self._stop.wait()
                if self._ended and not self._stop_requested and self.status == "ready":
                    calling = next(iter(self._inflight.values()), None)
                    if calling is not None:
                        self._set_exited(f"it exited or crashed during tools/call {calling}")
                    else:
                        self._set_exited("it exited while idle", stderr=True)
        except Exception as exc:  # noqa: BLE001 - any failure to start is reported, not raised
            if self.status == "starting":
                self._set_failed(self._start_failure(_leaf(exc)))
            elif self.status == "ready":  # the transport broke while idle
                self._set_exited(f"its connection ended: {_describe(_leaf(exc))}", stderr=True)
        finally:
            self._session = None
            if self.status == "ready":
                self.status = "closed"
            elif self.status == "starting":  # cancelled while starting
                self._set_failed("its start was cancelled")
            self._settled.set()
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None
            self._done.set()

    def reset(self) -> None:
        """Make a stopped, failed or exited connection ready to `run()` again."""
        if self._session is not None:
            raise RuntimeError(f"MCP server {self.name} is still running")
        self.status, self.error, self.tools, self.server_info = "starting", None, [], None
        self._stop, self._settled, self._done = anyio.Event(), anyio.Event(), anyio.Event()
        self._stop_requested, self._http_error = False, None

    def _connection_ended(self) -> None:
        """The server's side closed: wake `run()` unless we are the ones stopping."""
        self._ended = True
        if self._stop is not None and not self._stop.is_set():
            self._stop.set()

    def _set_exited(self, why: str, *, stderr: bool = False) -> None:
        if self.status != "ready":
            return
        self.status = "exited"
        self.error = f"{why}{self._stderr_tail()}" if stderr else why
        if self.on_status is not None:
            self.on_status(self)

    async def wait_done(self) -> None:
        """Return once `run()` has returned."""
        self._done = self._done or anyio.Event()
        await self._done.wait()

    async def wait_settled(self) -> None:
        """Return once the server is ready or has failed to start."""
        self._settled = self._settled or anyio.Event()
        await self._settled.wait()

    def stop(self) -> None:
        """Ask `run()` to close the session (and stop a stdio server's process)."""
        self._stop = self._stop or anyio.Event()
        self._stop_requested = True
        self._stop.set()

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.command is not None:
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            params = StdioServerParameters(
                command=config.command[0],
                args=list(config.command[1:]),
                env=config.env or None,
                cwd=config.cwd,
            )
            async with stdio_client(params, errlog=self._stderr) as (read, write):
                yield read, write
        else:
            assert config.url is not None
            from mcp.shared._httpx_utils import create_mcp_http_client

            async def seen(response: Any) -> None:
                if response.status_code >= 400 and response.request.method == "POST":
                    self._http_error = (response.status_code, response.reason_phrase or "")

            client = create_mcp_http_client(headers=config.headers or None)
            client.event_hooks["response"].append(seen)
            async with client, streamable_http_client(config.url, http_client=client) as streams:
                yield streams[0], streams[1]

    # -- calls -------------------------------------------------------------------------

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        signal: AbortSignal | None = None,
        progress: ProgressFn | None = None,
    ) -> mcp_types.CallToolResult:
        """Call `tool` on this server and return its result (which may have `is_error`).

        An abort of `signal` cancels the request (the SDK then sends the server
        `notifications/cancelled`) and raises at once.

        Raises:
            McpCallError: the server is not running, died, answered with an error,
                an invalid result or garbage, or the call was aborted
                (`details["aborted"]` is True).
        """
        details = {"server": self.name, "tool": tool}
        session = self._session
        if session is None or self.status != "ready":
            why = self.error or self.status
            raise McpCallError(f"MCP server {self.name} is not running: {why}", details)
        failure: str | None = None
        result: Any = None
        with anyio.CancelScope() as scope:

            def fail(text: str) -> None:
                nonlocal failure
                failure = text
                scope.cancel()

            cancel = CallCancel()

            def abort(reason: object) -> None:
                cancel.reason = _reason_text(reason)
                scope.cancel()

            self._inflight[fail] = tool
            remove = signal.add_listener(abort) if signal else None
            token = current_call.set(cancel)
            try:
                result = await session.call_tool(tool, arguments, progress_callback=progress)
            except MCPError as exc:
                raise self._protocol_failure(tool, exc, details) from None
            except ValidationError as exc:
                raise McpCallError(
                    f"MCP server {self.name} answered tools/call {tool} with an invalid result: "
                    f"{_first_line(str(exc))}",
                    details,
                ) from None
            except Exception as exc:  # noqa: BLE001 - the SDK raises RuntimeError and others
                raise McpCallError(
                    f"MCP server {self.name} failed on tools/call {tool}: {_describe(exc)}", details
                ) from None
            finally:
                current_call.reset(token)
                self._inflight.pop(fail, None)
                if remove is not None:
                    remove()
        if failure is not None:
            raise McpCallError(failure, details)
        if result is None:  # the abort cancelled the request
            reason = signal.reason if signal is not None else None
            why = "Operation aborted"
            if reason not in (None, why):
                why += f": {reason}"
            raise McpCallError(
                f"{why} (MCP server {self.name} was sent notifications/cancelled for {tool})",
                {**details, "aborted": True},
            )
        assert isinstance(result, mcp_types.CallToolResult)
        return result

    # -- failures ----------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        """The SDK's message handler: a line that is not JSON-RPC fails the calls in flight."""
        if not isinstance(message, Exception):
            return
        text = (
            f"MCP server {self.name} wrote something that is not a JSON-RPC message "
            f"({_garbage(message)}); the calls waiting on it were failed"
        )
        for fail in list(self._inflight):
            fail(text)

    def _protocol_failure(
        self, tool: str, exc: MCPError, details: dict[str, Any]
    ) -> McpCallError:
        if exc.error.code == CONNECTION_CLOSED:
            if self.status == "ready":
                self._set_exited(f"it exited or crashed during tools/call {tool}")
            return McpCallError(
                f"MCP server {self.name} died during tools/call {tool}: the connection closed "
                f"before it answered (the server process exited or crashed){self._stderr_tail()}",
                {**details, "exited": True},
            )
        return McpCallError(
            f"MCP server {self.name} answered tools/call {tool} with error {exc.error.code}: "
            f"{exc.error.message}",
            {**details, "code": exc.error.code, "data": exc.error.data},
        )

    def _start_failure(self, exc: BaseException) -> str:
        config = self.config
        if isinstance(exc, FileNotFoundError) and config.command is not None:
            why = f"command not found: {config.command[0]}"
        elif isinstance(exc, PermissionError) and config.command is not None:
            why = f"cannot run {config.command[0]}: permission denied"
        elif isinstance(exc, TimeoutError):
            why = (
                f"no answer to initialize within {config.startup_timeout:g}s "
                "(is it an MCP server speaking over "
                f"{'stdio' if config.transport == 'stdio' else 'streamable HTTP'}?)"
            )
        elif config.url is not None and self._http_error is not None:
            why = http_failure(config.url, *self._http_error)
        elif config.url is not None and _is_connect_error(exc):
            why = f"nothing answered at {config.url} ({_describe(exc)}): is the server running?"
        elif isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
            why = "it exited (or closed the connection) before answering initialize"
        else:
            why = _describe(exc)
        return f"{why}{self._stderr_tail()}"

    def _set_failed(self, why: str) -> None:
        self.status, self.error = "failed", why

    def _stderr_tail(self) -> str:
        """The last lines the server wrote to stderr, as a suffix for a message."""
        if self._stderr is None:
            return ""
        try:
            fd = self._stderr.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, 4096, max(0, size - 4096)).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line for line in data.splitlines() if line.strip()][-STDERR_TAIL_LINES:]
        if not lines:
            return ""
        return "\nIts last stderr lines:\n" + "\n".join(f"  {line}" for line in lines)


async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever cannot hang the start
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def http_failure(url: str, status: int, reason: str) -> str:
    """What an HTTP error status from an MCP endpoint means, and what to try."""
    head = f"{url} answered HTTP {status}{f' {reason}' if reason else ''}"
    if status == 401:
        hint = (
            "the server wants credentials: give it a header, e.g. "
            "headers = { Authorization = \"Bearer ...\" } in the server's config table"
        )
    elif status == 403:
        hint = "the server refused the credentials it was given (check the headers)"
    elif status in (404, 405):
        hint = (
            "there is no streamable-HTTP MCP endpoint at this path (such servers usually "
            "serve /mcp; a URL ending in /sse is the older SSE transport, which the "
            "workbench does not speak)"
        )
    elif status >= 500:
        hint = "the server failed while answering (see its own log)"
    else:
        hint = "the server did not accept the MCP request"
    return f"{head}: {hint}"


def _is_connect_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("ConnectError", "ConnectTimeout") or isinstance(
        exc, ConnectionError
    )


def _reason_text(reason: object) -> str:
    """The text sent as a cancellation's reason: the user's, or what aborted the call."""
    if reason is None:
        return "the user aborted the call"
    if isinstance(reason, BaseException):
        return _describe(reason)
    return str(reason)


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _garbage(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        seen = str(error.get("input", ""))[:80]
        return f"{error['msg']}; got {seen!r}" if seen else str(error["msg"])
    return _first_line(_describe(exc))[:200]
