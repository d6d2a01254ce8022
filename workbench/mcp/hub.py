"""McpHub: every configured MCP server, started together and kept for the app's lifetime.

    hub = McpHub(servers)
    async with hub.attach(agent):      # start them all; their tools join the agent's
        for line in hub.report():      # one line per server: its tools, or why it failed
            print(line)
        await agent.prompt("...")
    # leaving the block stops the servers and takes their tools away again

The hub enters a task group in the task that enters it (the Textual app uses a
worker that lives as long as the app; headless runs wrap the prompt), and each
server runs in a task of its own there. Servers start concurrently; `attach`
returns once each is ready or has failed. A failed server costs only its own
tools: the others and the run go on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp.shared.exceptions import MCPError

from workbench.agent import AgentTool
from workbench.bus_events import McpToolsChangedEvent
from workbench.mcp.capabilities import ClientSide, LogLevel
from workbench.mcp.client import McpConnection
from workbench.mcp.config import McpServerConfig
from workbench.mcp.inputs import InputBook
from workbench.mcp.requests import Asker, PolicyAsker, Sampler
from workbench.mcp.roots import roots_for
from workbench.mcp.tools import server_tools
from workbench.mcp.transports import kill_server_trees
from workbench.mcp.wire_record import WireRecording

SHUTDOWN_TIMEOUT = 10.0
"""Seconds `shutdown` waits for the servers to stop before killing their processes."""


class McpHub:
    """The MCP servers of one runtime and the tools they bring.

    Args:
        servers: the servers to start (names already unique, see `config.resolve_servers`).
    """

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        *,
        roots: Sequence[Path] = (),
        log_level: LogLevel | None = None,
        approve: str = "ask",
    ) -> None:
        self.connections = [
            McpConnection(server, ClientSide(roots_for(server, roots), log_level))
            for server in servers
        ]
        self.workspace_roots = list(roots)
        """The run's workspace as offered to the servers (`move_to` changes it)."""
        self._unsubscribe: Callable[[], None] = lambda: None
        self.on_tools_changed: Callable[[McpConnection, list[str], list[str]], None] | None = None
        """Called after a server's tool list changed: (server, names added, names removed)."""
        self.on_log: Callable[[McpConnection, str], None] | None = None
        """Called with each line a server logs (`notifications/message`)."""
        self._asker: Asker = PolicyAsker("none" if approve == "ask" else approve)
        self._sampler: Sampler | None = None
        for connection in self.connections:
            client = connection.client
            client.on_tools_changed = partial(self._relist, connection)
            client.on_log = partial(self._logged, connection)
            client.server, client.asker = connection.name, self._asker
            client.on_sampled = self._publish
        self.tools: list[AgentTool] = []
        """The tools of every ready server (set once the hub has started)."""
        self.on_change: Callable[[McpConnection], None] | None = None
        """Called when a ready server exits on its own (to tell the user at once)."""
        self._tg: TaskGroup | None = None
        self._agent: Any = None
        self.refused: list[str] = []
        """Tools not added because another tool has their name (one line each)."""
        self.on_authorize: Callable[[McpConnection, str | None], None] | None = None
        """Told the URL a person must open to authorize an HTTP server (OAuth), and None
        once they are back; set it before the servers start (they may ask at once)."""
        self.inputs = InputBook()
        """The mcp.json `${input:ID}`s given so far; `inputs.ask` asks a person (the app)."""
        self.wire_recording = WireRecording()
        """Every JSON-RPC message, for the session (`McpWireEvent`s once a run starts)."""
        for connection in self.connections:
            connection.on_status = self._changed
            connection.on_authorize = self._authorize
            connection.wire.on_entry = partial(self.wire_recording.add, connection.name)
            connection.fill_inputs = self.inputs.fill
        self.mask(None)

    @property
    def asker(self) -> Asker:
        """Who answers the servers' sampling and elicitation requests: the approval
        policy until the app puts a person there."""
        return self._asker

    @asker.setter
    def asker(self, asker: Asker) -> None:
        self._asker = asker
        for connection in self.connections:
            connection.client.asker = asker

    def mask(self, redact: Callable[[str], str] | None) -> None:
        """Mask known secrets in what the servers' wire logs keep, and in what the servers
        send that is shown, recorded or sent to a model (instructions, log lines,
        sampling requests), and the values of password inputs (`inputs`)."""

        def masked(text: str) -> str:
            text = self.inputs.mask(text)
            return redact(text) if redact is not None else text

        for connection in self.connections:
            connection.wire.redact = masked
            connection.client.redact = masked

    @property
    def sampler(self) -> Sampler | None:
        """What answers sampling requests (None until `use_model`)."""
        return self._sampler

    def use_model(self, stream_fn: Any, model: Any) -> None:
        """Answer sampling requests with this provider and model."""
        self._sampler = Sampler(stream_fn, model)
        for connection in self.connections:
            connection.client.sampler = self._sampler

    def _logged(self, connection: McpConnection, line: str) -> None:
        if self.on_log is not None:
            self.on_log(connection, line)

    async def _relist(self, connection: McpConnection) -> None:
        """List the server's tools again; say so only if anything changed (a burst of
        notifications re-lists twice at most, and the second usually finds nothing)."""
        before = {t.name for t in self.tools if t.source == f"mcp:{connection.name}"}
        listed = [t.model_dump() for t in connection.tools]
        await connection.relist_tools()
        if [t.model_dump() for t in connection.tools] == listed:
            connection.note("tools/list_changed: listed again, nothing changed")
            return
        after = {t.name for t in self._replace_tools(connection)}
        added, removed = sorted(after - before), sorted(before - after)
        await self._publish(
            McpToolsChangedEvent(server=connection.name, added=added, removed=removed)
        )
        if self.on_tools_changed is not None:
            self.on_tools_changed(connection, added, removed)

    async def _publish(self, event: Any) -> None:
        """Put `event` on the attached agent's bus (the session records it)."""
        if self._agent is not None:
            await self._agent.publish(event)

    async def set_roots(self, roots: Sequence[Path], name: str | None = None) -> None:
        """Offer `roots` from now on to server `name` (every server if None), and tell
        each one running that they changed (`notifications/roots/list_changed`)."""
        for connection in self.connections:
            if name is not None and connection.name != name:
                continue
            connection.client.roots = list(roots)
            session = connection._session
            if session is not None and connection.status == "ready":
                await session.send_roots_list_changed()

    async def set_log_level(self, name: str, level: LogLevel) -> str:
        """Ask server `name` for log lines of `level` and above (`logging/setLevel`);
        what became of it, in words."""
        connection = self.connection(name)
        connection.client.log_level = level
        if connection.status != "ready":
            return f"MCP server {name} will be asked for {level} when it starts"
        session = connection.session_for(f"logging/setLevel {level}")
        try:
            await session.set_logging_level(level)
        except MCPError as exc:  # a server without the logging capability, often
            connection.note(f"logging/setLevel {level} was refused: {exc.error.message}")
            return f"MCP server {name} refused log level {level}: {exc.error.message}"
        return f"MCP server {name} now logs at {level} and above"

    def _authorize(self, connection: McpConnection, url: str | None) -> None:
        if self.on_authorize is not None:
            self.on_authorize(connection, url)

    def _changed(self, connection: McpConnection) -> None:
        if self.on_change is not None:
            self.on_change(connection)

    def connection(self, name: str) -> McpConnection:
        """The server called `name`.

        Raises:
            KeyError: no server has that name.
        """
        for connection in self.connections:
            if connection.name == name:
                return connection
        raise KeyError(f"no MCP server named {name!r}")

    async def restart(self, name: str) -> McpConnection:
        """Start server `name` again (after it exited or failed, or was disabled; a
        running one, wedged perhaps, is stopped first); its tools are listed anew and
        replace its old ones (in the attached agent's tools too).

        Raises:
            KeyError: no such server.
            RuntimeError: the hub is not started, or the server is still starting.
        """
        connection = self.connection(name)
        if self._tg is None:
            raise RuntimeError("the MCP servers are not started")
        if connection.status == "starting":
            raise RuntimeError(f"MCP server {name} is starting")
        if connection.status == "ready":
            connection.stop()
        await connection.wait_stopped()
        connection.reset()
        self._tg.start_soon(connection.run, name=f"mcp:{connection.name}")
        await connection.wait_settled()
        self._replace_tools(connection)
        return connection

    async def disable(self, name: str) -> McpConnection:
        """Stop server `name` until it is started again (`restart`); its tools go.

        Raises:
            KeyError: no such server.
        """
        connection = self.connection(name)
        connection.stop()
        await connection.wait_stopped()
        connection.status = "disabled"
        self._replace_tools(connection)
        return connection

    def _replace_tools(self, connection: McpConnection) -> list[AgentTool]:
        """Build the server's tools from its current list; they replace its old ones
        here and in the attached agent's tools (for the next model request)."""
        source = f"mcp:{connection.name}"
        old = [t for t in self.tools if t.source == source]
        kept = [t for t in self.tools if t.source != source]
        gone = set(map(id, old))
        taken = [t.name for t in kept]
        if self._agent is not None:
            taken += [t.name for t in self._agent.state.tools if id(t) not in gone]
        fresh = server_tools(connection, taken) if connection.status == "ready" else []
        self.tools = kept + fresh
        if self._agent is not None:
            # In place: a run in progress holds this very list as its context's tools,
            # so the change reaches its next model request.
            tools = self._agent.state.tools
            tools[:] = [*(t for t in tools if id(t) not in gone), *fresh]
        return fresh

    @property
    def failed(self) -> list[McpConnection]:
        """Servers that did not start (or have since exited)."""
        return [c for c in self.connections if c.status in ("failed", "exited")]

    async def start(self, taken: Sequence[str] = ()) -> None:
        """Start every server; return once each is ready or has failed.

        Must be paired with `aclose()` in the same task (or use `attach`).
        """
        if self._tg is not None:
            raise RuntimeError("McpHub already started")
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            started = [c for c in self.connections if c.status != "disabled"]
            for connection in started:
                tg.start_soon(connection.run, name=f"mcp:{connection.name}")
            if started:  # while the servers boot: what their tools need next
                await anyio.to_thread.run_sync(import_module, "jsonschema")
            for connection in started:
                await connection.wait_settled()
        except BaseException:
            await self.aclose()
            raise
        tools: list[AgentTool] = []
        for connection in self.connections:
            if connection.status == "ready":
                tools += server_tools(connection, [*taken, *(t.name for t in tools)])
        self.tools = tools

    async def aclose(self) -> None:
        """Stop every server (a stdio server's process is ended) and wait for them."""
        tg, self._tg = self._tg, None
        if tg is None:
            return
        for connection in self.connections:
            connection.stop()
        # Shield the group's own scope (a new scope here would break the LIFO exit), so
        # a cancelled caller still waits for the servers to stop; each stop is bounded.
        tg.cancel_scope.shield = True
        await tg.__aexit__(None, None, None)

    async def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT) -> None:
        """Stop every server and return once each has stopped (a stdio server's
        processes ended); past `timeout`, whatever is left of their processes is killed.
        For a caller outside the task that started the hub (an app quitting)."""
        for connection in self.connections:
            connection.stop()
        with anyio.move_on_after(timeout) as scope:
            for connection in self.connections:
                await connection.wait_stopped()
        if scope.cancelled_caught:
            kill_server_trees()

    @asynccontextmanager
    async def attach(self, agent: Any) -> AsyncIterator[McpHub]:
        """Start the servers, add their tools to `agent.state.tools` while inside."""
        own = {t.name: t for t in agent.state.tools if not (t.source or "").startswith("mcp:")}
        await self.start(taken=[t.name for t in agent.state.tools if t.name not in own])
        # A name taken by a built-in or one of your tools is refused, not renamed: two
        # tools the model could mix up must not both be offered.
        self.refused = [
            f"MCP server {(t.source or '')[4:]}: tool {t.name} not added: the name is taken "
            f"by {own[t.name].source or 'another tool'}"
            for t in self.tools
            if t.name in own
        ]
        self.tools = [t for t in self.tools if t.name not in own]
        try:
            self._adopt(agent)
            yield self
        finally:
            await self._release()
            await self.aclose()

    def _adopt(self, agent: Any) -> None:
        """Give `agent` the servers' tools and instructions; its bus gets the wire."""
        agent.state.tools = [*agent.state.tools, *self.tools]
        agent.state.system_prompt = with_instructions(agent.state.system_prompt, self.connections)
        self._agent = agent
        self._unsubscribe = agent.subscribe(self.wire_recording.on_bus)
        assert self._tg is not None
        self._tg.start_soon(self.wire_recording.pump, agent, name="mcp:wire")

    async def _release(self) -> None:
        """Take the tools back from the attached agent (the wire held so far goes first)."""
        agent, self._agent = self._agent, None
        if agent is None:
            return
        self._unsubscribe()
        self.wire_recording.stop()
        await self.wire_recording.flush(agent)
        mine = set(map(id, self.tools))
        agent.state.tools = [t for t in agent.state.tools if id(t) not in mine]

    @property
    def attached(self) -> bool:
        """Whether the servers are up and serve an agent (`attach`)."""
        return self._agent is not None

    async def move_to(
        self, agent: Any, workspace_roots: Sequence[Path] = (), like: McpHub | None = None
    ) -> list[str]:
        """A new run (ctrl+n) keeps the running servers: their tools go to `agent`, the
        wire from now on to its session, and each server whose roots offered the old
        workspace is offered `workspace_roots` instead and told
        (`notifications/roots/list_changed`). `like`: the hub built for the new run
        (not started), whose model answers sampling requests from now on. The names of
        the servers told."""
        await self._release()
        if like is not None and like.sampler is not None:
            self.use_model(like.sampler.stream_fn, like.sampler.model)
        self.mask(getattr(agent, "redact", None))
        self.wire_recording = WireRecording()
        for connection in self.connections:
            connection.wire.on_entry = partial(self.wire_recording.add, connection.name)
        self._adopt(agent)
        old, self.workspace_roots = self.workspace_roots, list(workspace_roots)
        told = []
        for connection in self.connections:
            roots = connection.client.roots
            if roots == roots_for(connection.config, old):  # as configured: again
                moved = roots_for(connection.config, self.workspace_roots)
            else:  # edited in the app: only the workspace changes
                gone = {path.resolve() for path in old}
                moved = [
                    *dict.fromkeys(
                        new
                        for root in roots
                        for new in (self.workspace_roots if root.resolve() in gone else [root])
                    )
                ]
            if moved != roots:
                await self.set_roots(moved, connection.name)
                told.append(connection.name)
        return told

    def report(self) -> list[str]:
        """One line per server: how many tools it brought, or why it failed (a failure's
        line may go on with the server's last stderr lines)."""
        lines = []
        for c in self.connections:
            if c.status == "ready":
                count = sum(1 for t in self.tools if t.source == f"mcp:{c.name}")
                line = f"MCP server {c.name}: {count} tools ({c.config.target})"
                notes = [f"  {why}" for why in c.dropped]
                if c.instructions:
                    used = (
                        "added to the system prompt"
                        if c.config.use_instructions
                        else ("use_instructions = true adds them to the system prompt")
                    )
                    first = c.instructions.strip().splitlines()[0][:100]
                    notes.append(f"  its instructions ({used}): {first}")
                lines.append("\n".join([line, *notes]))
            elif c.status == "disabled":
                lines.append(
                    f"MCP server {c.name}: disabled (enabled = false in {c.config.source}; "
                    "F7, r starts it)"
                )
            else:
                lines.append(describe_failure(c))
        return lines + self.refused


def describe_failure(connection: McpConnection) -> str:
    """`MCP server NAME exited: WHY`, then the server's last stderr lines if any."""
    what = "exited" if connection.status == "exited" else "failed to start"
    first, *rest = (connection.error or connection.status).splitlines() or [connection.status]
    head = f"MCP server {connection.name} {what}: {first}"
    return "\n".join([head, *rest])


def with_instructions(prompt: str, connections: Sequence[McpConnection]) -> str:
    """`prompt` with the instructions of each ready server that is set to use them."""
    parts = [prompt] if prompt else []
    for c in connections:
        if c.status == "ready" and c.instructions and c.config.use_instructions:
            parts.append(f"Instructions from MCP server {c.name}:\n{c.instructions.strip()}")
    return "\n\n".join(parts)
