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
from contextlib import AsyncExitStack, asynccontextmanager
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
from workbench.proctree import ProcessTree

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


SERVER_TREE_GRACE = 2.0
"""Seconds a stdio server's leftover processes get after SIGTERM before SIGKILL."""
SERVER_WATCH_INTERVAL = 0.5
"""Seconds between looks at whether a stdio server is still alive."""


async def _end_tree_when_server_exits(tree: ProcessTree) -> None:
    """Keep track of the server's descendants; once the server itself has exited,
    end whatever it left behind (its session then ends as its pipes close)."""
    for _ in range(20):
        if tree.adopt_child():
            break
        await anyio.sleep(SERVER_WATCH_INTERVAL / 10)
    while tree.root_running():
        tree.watch()
        await anyio.sleep(SERVER_WATCH_INTERVAL)
    await tree.end(SERVER_TREE_GRACE)


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
        self._inflight: set[Callable[[str], None]] = set()

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
        try:
            async with self._transport() as (read, write), ClientSession(
                read,
                write,
                message_handler=self._on_message,
                client_info=mcp_types.Implementation(name="agent-workbench", version=__version__),
            ) as session:
                with anyio.fail_after(self.config.startup_timeout):
                    info = await session.initialize()
                    self.tools = await _list_tools(session)
                    _bound_output_schemas(session, self.tools)
                self.server_info = f"{info.server_info.name} {info.server_info.version}".strip()
                self._session = session
                self.status = "ready"
                self._settled.set()
                await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 - any failure to start is reported, not raised
            if self.status == "starting":
                self._set_failed(self._start_failure(_leaf(exc)))
            elif self.status == "ready":  # the transport broke while idle
                self.status = "exited"
                self.error = f"its connection ended: {_describe(_leaf(exc))}"
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

    async def wait_settled(self) -> None:
        """Return once the server is ready or has failed to start."""
        self._settled = self._settled or anyio.Event()
        await self._settled.wait()

    def stop(self) -> None:
        """Ask `run()` to close the session (and stop a stdio server's process)."""
        self._stop = self._stop or anyio.Event()
        self._stop.set()

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.command is not None:
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            tree = ProcessTree(f"mcp-{config.name}")
            params = StdioServerParameters(
                command=config.command[0],
                args=list(config.command[1:]),
                env=tree.env(dict(config.env)),
                cwd=config.cwd,
            )
            try:
                async with stdio_client(params, errlog=self._stderr) as (read, write):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_end_tree_when_server_exits, tree)
                        yield read, write
                        tg.cancel_scope.cancel()
            finally:
                # The SDK ends the server's process group; children that left it
                # (setsid, double fork) end here, whether the server exited or was stopped.
                with anyio.CancelScope(shield=True):
                    await tree.end(SERVER_TREE_GRACE)
        else:
            assert config.url is not None
            async with AsyncExitStack() as stack:
                client = None
                if config.headers:  # the SDK's way to add headers: bring your own client
                    import httpx2

                    timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults
                    client = await stack.enter_async_context(
                        httpx2.AsyncClient(headers=config.headers, timeout=timeout)
                    )
                streams = await stack.enter_async_context(
                    streamable_http_client(config.url, http_client=client)
                )
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

            self._inflight.add(fail)
            remove = signal.add_listener(lambda _reason: scope.cancel()) if signal else None
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
                self._inflight.discard(fail)
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
            self.status = "exited"
            self.error = f"it exited or crashed during tools/call {tool}"
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


def _bound_output_schemas(session: ClientSession, tools: list[mcp_types.Tool]) -> None:
    """Give the SDK time-bounded validators for the tools' output schemas.

    The SDK checks a result's `structuredContent` against the tool's `outputSchema`
    with `jsonschema`, whose `pattern` matching has no time bound: a hostile server
    could freeze the event loop with its own schema. The SDK keeps the compiled
    validators in a cache (by tool name) that it fills only when empty; filling it
    first with `schema_patterns` validators bounds that matching too.
    """
    cache = getattr(session, "_tool_output_validators", None)
    if not isinstance(cache, dict):
        return
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]
    from referencing import Registry

    from workbench.agent.schema_patterns import with_safe_patterns

    for tool in tools:
        schema = tool.output_schema
        if not isinstance(schema, dict):
            continue
        cls = validator_for(schema)
        try:
            cls.check_schema(schema)
        except SchemaError:
            continue  # the SDK reports an invalid schema itself, at the call
        cache[tool.name] = with_safe_patterns(cls)(schema, registry=Registry())


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
