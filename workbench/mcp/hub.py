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
from typing import Any

import anyio
from anyio.abc import TaskGroup

from workbench.agent import AgentTool
from workbench.mcp.client import McpConnection
from workbench.mcp.config import McpServerConfig
from workbench.mcp.tools import server_tools


class McpHub:
    """The MCP servers of one runtime and the tools they bring.

    Args:
        servers: the servers to start (names already unique, see `config.resolve_servers`).
    """

    def __init__(self, servers: Sequence[McpServerConfig]) -> None:
        self.connections = [McpConnection(server) for server in servers]
        self.tools: list[AgentTool] = []
        """The tools of every ready server (set once the hub has started)."""
        self.on_change: Callable[[McpConnection], None] | None = None
        """Called when a ready server exits on its own (to tell the user at once)."""
        self._tg: TaskGroup | None = None
        self._agent: Any = None
        for connection in self.connections:
            connection.on_status = self._changed

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
        """Start server `name` again (after it exited or failed); its tools are listed
        anew and replace its old ones (in the attached agent's tools too).

        Raises:
            KeyError: no such server.
            RuntimeError: the hub is not started, or the server is still running.
        """
        connection = self.connection(name)
        if self._tg is None:
            raise RuntimeError("the MCP servers are not started")
        if connection.status == "ready":
            raise RuntimeError(f"MCP server {name} is running")
        await connection.wait_done()
        connection.reset()
        self._tg.start_soon(connection.run, name=f"mcp:{connection.name}")
        await connection.wait_settled()
        source = f"mcp:{connection.name}"
        old = [t for t in self.tools if t.source == source]
        kept = [t for t in self.tools if t.source != source]
        taken = [t.name for t in kept]
        if self._agent is not None:
            gone = set(map(id, old))
            taken += [t.name for t in self._agent.state.tools if id(t) not in gone]
        fresh = server_tools(connection, taken) if connection.status == "ready" else []
        self.tools = kept + fresh
        if self._agent is not None:
            gone = set(map(id, old))
            others = [t for t in self._agent.state.tools if id(t) not in gone]
            self._agent.state.tools = [*others, *fresh]
        return connection

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
            for connection in self.connections:
                tg.start_soon(connection.run, name=f"mcp:{connection.name}")
            for connection in self.connections:
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

    @asynccontextmanager
    async def attach(self, agent: Any) -> AsyncIterator[McpHub]:
        """Start the servers, add their tools to `agent.state.tools` while inside."""
        await self.start(taken=[t.name for t in agent.state.tools])
        try:
            agent.state.tools = [*agent.state.tools, *self.tools]
            self._agent = agent
            yield self
        finally:
            self._agent = None
            mine = set(map(id, self.tools))
            agent.state.tools = [t for t in agent.state.tools if id(t) not in mine]
            await self.aclose()

    def report(self) -> list[str]:
        """One line per server: how many tools it brought, or why it failed (a failure's
        line may go on with the server's last stderr lines)."""
        lines = []
        for c in self.connections:
            if c.status == "ready":
                count = sum(1 for t in self.tools if t.source == f"mcp:{c.name}")
                lines.append(f"MCP server {c.name}: {count} tools ({c.config.target})")
            else:
                lines.append(describe_failure(c))
        return lines


def describe_failure(connection: McpConnection) -> str:
    """`MCP server NAME exited: WHY`, then the server's last stderr lines if any."""
    what = "exited" if connection.status == "exited" else "failed to start"
    first, *rest = (connection.error or connection.status).splitlines() or [connection.status]
    head = f"MCP server {connection.name} {what}: {first}"
    return "\n".join([head, *rest])
