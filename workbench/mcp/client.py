"""One MCP server, connected through the official SDK and kept open in its own task.

`McpConnection.run()` is a long-lived task: it starts the server (a subprocess
over stdio, or a streamable-HTTP endpoint), answers the `initialize` handshake,
lists the tools, reports itself ready (or failed, with the reason) and then
holds the session open until `stop()`. The SDK's transports and sessions are
async context managers that must be entered and left in one task, which is why
the session lives there and tool calls, made from the agent's tasks, only send
requests through it.

Every failure becomes an `McpCallError` naming the server and what happened: it is
not running, it died during the call (with its last stderr lines), it answered with
a JSON-RPC error, an invalid result, or a line that is not JSON-RPC at all. An
aborted call is cancelled through the SDK, which sends `notifications/cancelled`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

import anyio
import mcp_types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from workbench import __version__
from workbench.agent import AbortSignal
from workbench.mcp.bounds import bound_output_schemas
from workbench.mcp.capabilities import ClientSide
from workbench.mcp.catalog import Catalog
from workbench.mcp.catalog_requests import CatalogRequests
from workbench.mcp.config import McpServerConfig
from workbench.mcp.early import take_early
from workbench.mcp.failures import (
    CONNECTION_CLOSED,
    InputMissing,
    McpCallError,
    Unreadable,
    call_failure,
    describe,
    first_line,
    garbage,
    is_notification,
    leaf,
    reason_text,
    start_failure,
)
from workbench.mcp.listing import list_tools
from workbench.mcp.quiet import serving
from workbench.mcp.stderr import STDERR_TAIL_LINES, ServerStderr
from workbench.mcp.streams import (
    CallCancel,
    CancelReasonWriter,
    SurrogateRepair,
    Tap,
    ToolListGuard,
    WatchedReader,
    current_call,
)
from workbench.mcp.transports import http_transport, stdio_transport
from workbench.mcp.wire import Wire

PING_TIMEOUT = 5.0
"""Seconds a server gets to answer `ping` before it counts as wedged."""
LOG_LINES = 200  # lines of protocol noise a connection keeps (`McpConnection.log`)

Status = Literal["starting", "ready", "failed", "exited", "closed", "disabled"]


class ProgressFn(Protocol):
    """Receives a call's progress notifications (the SDK's progress callback)."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


class McpConnection(CatalogRequests):
    """One MCP server: its status, its tools, and calls to them.

    Args:
        config: the server to start or connect to.
    """

    def __init__(self, config: McpServerConfig, client: ClientSide | None = None) -> None:
        self.config = config
        self.client = client or ClientSide()
        """Roots, the server's log and what to do on tools/list_changed."""
        self.wire = Wire()
        """Every JSON-RPC message with the server, both ways (the last few hundred)."""
        self.instructions: str | None = None
        """What the server's `initialize` answer says about using it, if anything."""
        self.status: Status = "starting" if config.enabled else "disabled"
        self.error: str | None = None
        """Why the server failed or exited (None while it is fine)."""
        self.tools: list[mcp_types.Tool] = []
        """What `tools/list` returned at startup."""
        self.server_info: str | None = None
        """The server's own name and version, from `initialize`."""
        self.catalog = Catalog()
        """Its resources, resource templates and prompts (listed once it is ready)."""
        self.client.on_list_changed = self._relist_catalog
        self.client.on_resource_updated = self._resource_updated
        self.subscribed: set[str] = set()  # resources/subscribe'd URIs
        self.updates: dict[str, int] = {}  # how often each was said to change
        self.on_updated: list[Callable[[str], None]] = []  # told each updated URI
        self._session: ClientSession | None = None
        self._capabilities: Any = None
        self._stderr = ServerStderr()
        self._stop: anyio.Event | None = None
        self._settled: anyio.Event | None = None
        self._inflight: dict[Callable[[str], None], str] = {}
        """Each call in flight: how to fail it, and the tool it calls."""
        self._ended = False
        self._stop_requested = False
        self._start_scope: anyio.CancelScope | None = None
        self._garbled: str | None = None
        """The first line this server wrote that was not JSON-RPC (while starting)."""
        self.dropped: list[str] = []
        """Why each tool of `tools/list` that could not be read was left out."""
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        """Protocol noise from this server: malformed notifications, stray lines."""
        self._done: anyio.Event | None = None
        """Set when `run()` has returned (the transport is closed)."""
        self._http_error: tuple[int, str] | None = None
        """The last HTTP error status the server answered with, and its reason."""
        self.on_status: Callable[[McpConnection], None] | None = None
        """Called when the server exits on its own after it was ready (set by the hub)."""
        self.ping_ms: float | None = None  # its last answer to `ping` took; None: no answer
        self.unanswered_ping: str | None = None  # a "ready" server not answering (wedged)
        self.authorize_url: str | None = None  # to open to authorize it (OAuth), while it waits
        self.fill_inputs: Callable[[McpServerConfig], Awaitable[McpServerConfig]] | None = None
        """Gives the server's `${input:ID}`s before it starts (set by the hub)."""
        self.on_authorize: Callable[[McpConnection, str | None], None] | None = None
        """Told each authorization URL (OAuth; the app shows it, headless prints it), and
        None once the person is back."""

    # -- lifetime ----------------------------------------------------------------------

    async def run(self) -> None:
        """Start the server and keep the session open until `stop()` (or cancellation).

        Never raises for the server's failures: they set `status` and `error`.
        """
        self._stop = self._stop or anyio.Event()
        self._settled = self._settled or anyio.Event()
        self._done = self._done or anyio.Event()
        self._ended = False
        serving.set(self)
        # the wire sees what came, lone surrogates as U+FFFD
        taps: list[Tap] = [SurrogateRepair(), self.wire, ToolListGuard(self._tool_dropped)]
        try:
            config = await self._filled()
            async with (
                self._transport(config) as (read, write),
                ClientSession(
                    WatchedReader(read, self._connection_ended, taps),
                    CancelReasonWriter(write, taps),
                    message_handler=self._on_message,
                    client_info=mcp_types.Implementation(
                        name="agent-workbench", version=__version__
                    ),
                    **self.client.session_options(),
                ) as session,
            ):
                with anyio.fail_after(self.config.startup_timeout) as self._start_scope:
                    info = await session.initialize()
                    await self._set_log_level(session, info)
                    self.tools = await list_tools(session, self._tool_dropped)
                    bound_output_schemas(session, self.tools)
                    await self.catalog.load(session, info.capabilities, ("resources", "prompts"))
                if self._start_scope.cancelled_caught:
                    raise Unreadable(self._garbled or "an answer that could not be read")
                self.server_info = f"{info.server_info.name} {info.server_info.version}".strip()
                self._capabilities = info.capabilities
                self.instructions = self.client.masked(info.instructions) or None
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
                self._set_failed(self._start_failure(leaf(exc)))
            elif self.status == "ready":  # the transport broke while idle
                self._set_exited(f"its connection ended: {describe(leaf(exc))}", stderr=True)
        finally:
            self._session = None
            if self.status == "ready":
                self.status = "closed"
            elif self.status == "starting":  # cancelled while starting
                self._set_failed("its start was cancelled")
            self._settled.set()
            self._stderr.close()
            self._done.set()

    def reset(self) -> None:
        """Make a stopped, failed or exited connection ready to `run()` again."""
        if self._session is not None:
            raise RuntimeError(f"MCP server {self.name} is still running")
        self.status, self.error, self.tools, self.server_info = "starting", None, [], None
        self.catalog.clear()
        self.dropped, self._garbled = [], None
        self._stop, self._settled, self._done = anyio.Event(), anyio.Event(), anyio.Event()
        self._stop_requested, self._http_error = False, None
        self.authorize_url = None
        self.ping_ms, self.unanswered_ping = None, None

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

    async def wait_stopped(self) -> None:
        """Return once `run()` has returned, or at once if it never started."""
        if self._done is not None:
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

    async def _filled(self) -> McpServerConfig:
        """The config with its `${input:…}`s given (see `fill_inputs`)."""
        if not self.config.inputs:
            return self.config
        if self.fill_inputs is None:
            names = ", ".join(f"${{input:{i.id}}}" for i in self.config.inputs)
            raise InputMissing(f"nobody gives its inputs ({names})")
        return await self.fill_inputs(self.config)

    def _transport(self, config: McpServerConfig) -> Any:
        if config.command is not None:
            early = take_early(config)
            if early is not None:
                return stdio_transport(config, self._stderr.adopt(early[1]), early)
            return stdio_transport(config, self._stderr.open())
        return http_transport(config, self._http_failed, (self._authorize, self._on_person))

    def _authorize(self, url: str) -> None:
        self.authorize_url = url
        if self.on_authorize is not None:
            self.on_authorize(self, url)

    def _on_person(self, waiting: bool) -> None:
        """The start timeout stops while a person authorizes, and starts afresh after."""
        scope = self._start_scope
        if scope is not None:
            timeout = self.config.startup_timeout
            scope.deadline = math.inf if waiting else anyio.current_time() + timeout
        if not waiting:
            self.authorize_url = None
            if self.on_authorize is not None:
                self.on_authorize(self, None)

    def _http_failed(self, status: int, reason: str) -> None:
        self._http_error = (status, reason)

    async def ping(self, timeout: float = PING_TIMEOUT) -> float:
        """Ping the server; how long its answer took, in ms (no answer within `timeout`
        seconds marks it wedged: `unanswered_ping`).

        Raises:
            McpCallError: it is not running, refused, or did not answer in time.
        """
        session = self.session_for("ping")
        began = anyio.current_time()
        with anyio.move_on_after(timeout) as waited:
            try:
                await session.send_ping()
            except MCPError as exc:
                raise McpCallError(
                    f"MCP server {self.name} refused ping: {exc.error.message}"
                ) from None
        if waited.cancelled_caught:
            self.ping_ms = None
            self.unanswered_ping = f"no answer to ping within {timeout:g}s: it may be wedged"
            raise McpCallError(f"MCP server {self.name} gave {self.unanswered_ping}")
        self.ping_ms = (anyio.current_time() - began) * 1000
        self.unanswered_ping = None
        return self.ping_ms

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
                cancel.reason = reason_text(reason)
                scope.cancel()

            self._inflight[fail] = tool
            remove = signal.add_listener(abort) if signal else None
            token = current_call.set(cancel)
            try:
                result = await session.call_tool(tool, arguments, progress_callback=progress)
            except MCPError as exc:
                if exc.error.code == CONNECTION_CLOSED:
                    self._set_exited(f"it exited or crashed during tools/call {tool}")
                raise call_failure(self.name, tool, exc, details, self._stderr_tail()) from None
            except ValidationError as exc:
                raise McpCallError(
                    f"MCP server {self.name} answered tools/call {tool} with an invalid result: "
                    f"{first_line(str(exc))}",
                    details,
                ) from None
            except Exception as exc:  # noqa: BLE001 - the SDK raises RuntimeError and others
                raise McpCallError(
                    f"MCP server {self.name} failed on tools/call {tool}: {describe(exc)}", details
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
        await self.client.settled()
        return result

    # -- failures ----------------------------------------------------------------------

    def _tool_dropped(self, why: str) -> None:
        self.dropped.append(why)
        self.note(why)

    def note(self, line: str) -> None:
        """Keep one line of protocol noise in `log`."""
        self.log.append(line.splitlines()[0] if line.strip() else line)

    async def relist_tools(self) -> None:
        """List the server's tools again (after it said its list changed)."""
        session = self._session
        if session is not None and self.status == "ready":
            self.tools = await list_tools(session, self._tool_dropped)
            bound_output_schemas(session, self.tools)

    async def _set_log_level(self, session: ClientSession, info: Any) -> None:
        level = self.client.log_level
        if level is None or getattr(info.capabilities, "logging", None) is None:
            return
        try:
            await session.set_logging_level(level)
        except MCPError as exc:
            self.note(f"logging/setLevel {level} was refused: {exc.error.message}")

    async def _on_message(self, message: Any) -> None:
        """The SDK's message handler: a line that is not JSON-RPC fails the calls in flight
        (their answer may have been in it); a malformed notification is only logged."""
        if not isinstance(message, Exception):
            await self.client.notified(message)
            return
        if is_notification(message):
            self.note(f"ignored a malformed notification ({garbage(message)})")
            return
        if self.status == "starting":
            self._garbled = self._garbled or garbage(message)
            self.note(f"wrote something that is not JSON-RPC ({garbage(message)})")
            if "recursion" in self._garbled and self._start_scope is not None:
                self._start_scope.cancel()  # its answer is lost: waiting cannot help
            return
        text = (
            f"MCP server {self.name} wrote something that is not a JSON-RPC message "
            f"({garbage(message)}); the calls waiting on it were failed"
        )
        for fail in list(self._inflight):
            fail(text)

    def _start_failure(self, exc: BaseException) -> str:
        why = start_failure(self.config, exc, garbled=self._garbled, http_error=self._http_error)
        return f"{why}{self._stderr_tail()}"

    def _set_failed(self, why: str) -> None:
        self.status, self.error = "failed", why

    def stderr_lines(self, count: int = STDERR_TAIL_LINES) -> list[str]:
        """The last non-blank lines the server wrote to stderr (kept after it stopped)."""
        return self._stderr.lines(count, self.client.redact)

    def _stderr_tail(self) -> str:
        return self._stderr.tail(self.client.redact)
