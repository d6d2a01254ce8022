"""The app's MCP servers: started with the app, watched, restarted (F7, the palette).

A mixin of `WorkbenchApp`. The servers start in a worker that holds them for the
app's lifetime; their tools join the agent's, each server's outcome is a
notification, and a prompt sent before they are up waits for them.

Quitting (ctrl+q, or SIGTERM / SIGHUP while servers run) first stops every server and
waits for their processes to end (bounded: see `McpHub.shutdown`), then exits: a
worker cancelled as the app's loop winds down could not be relied on to finish that.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterable
from typing import Any

from textual import work


class McpLifecycle:
    """`_serve_mcp`, `restart_mcp_server` and `action_mcp_servers`, for `WorkbenchApp`."""

    runtime: Any
    agent: Any
    labels: dict[str, str]
    descriptions: dict[str, str]
    sources: dict[str, str]
    _mcp_started: asyncio.Event | None
    notify: Any
    exit: Any
    call_later: Any
    workers: Any
    push_screen: Any
    _refresh_now: Any
    open_mcp_catalog: Any
    screen_stack: Any

    def learn_tools(self, tools: Iterable[Any]) -> None:
        """Note the label, description and source of `tools` (new or changed ones)."""
        for t in tools:
            self.labels[t.name] = t.label
            self.descriptions[t.name] = t.description
            if t.source:
                self.sources[t.name] = t.source

    @work(group="mcp", exit_on_error=False)
    async def _serve_mcp(self) -> None:
        """Start the MCP servers and keep them for the app's lifetime; their tools join
        the agent's, and each server's outcome is a notification."""
        hub = self.runtime.mcp
        assert hub is not None and self._mcp_started is not None
        self._quit_on_signals()
        if self.runtime.gate is not None and self.runtime.gate.policy == "ask":
            from workbench.widgets.mcp_requests import AppAsker

            hub.asker = AppAsker(self)  # a person answers the servers' requests
        hub.on_authorize = self._mcp_authorize
        from workbench.widgets.mcp_input import InputAsker

        hub.inputs.ask = InputAsker(self)  # the mcp.json ${input:ID}s
        try:
            async with hub.attach(self.agent):
                self.learn_tools(self.agent.state.tools)
                for connection, line in zip(hub.connections, hub.report(), strict=True):
                    failed = connection.status != "ready"
                    self.notify(
                        line,
                        severity="error" if failed else "information",
                        timeout=12 if failed else 4,
                        markup=False,
                    )
                hub.on_change = self._mcp_server_exited
                hub.on_tools_changed = self._mcp_tools_changed
                self._mcp_started.set()
                self._refresh_now()
                await asyncio.Event().wait()  # until the app exits and cancels this worker
        except Exception as exc:  # noqa: BLE001 - the app goes on without MCP tools
            self.notify(f"MCP servers could not be started: {exc}", severity="error", markup=False)
        finally:
            self._mcp_started.set()
            loop = asyncio.get_running_loop()
            for each in (signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(each)

    @work(group="mcp-move", exit_on_error=False)
    async def _move_mcp(self, built: Any) -> None:
        """A new run (ctrl+n): the running servers' tools join its agent, and a server
        offered the old workspace as a root is offered the new one (and told:
        `roots/list_changed`), instead of starting every server again. `built`: the
        hub made for the new run, never started."""
        hub = self.runtime.mcp
        assert hub is not None and self._mcp_started is not None
        try:
            told = await hub.move_to(self.agent, [self.runtime.workspace], like=built)
            self.learn_tools(self.agent.state.tools)
            if told:
                self.notify(
                    f"MCP servers kept; new roots sent (roots/list_changed) to {', '.join(told)}",
                    markup=False,
                )
        finally:
            self._mcp_started.set()
            self._refresh_now()

    def _quit_on_signals(self) -> None:
        """SIGTERM and SIGHUP quit as ctrl+q does (the servers stop first)."""
        loop = asyncio.get_running_loop()
        for each in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(each, self.call_later, self.action_quit)

    async def action_quit(self) -> None:
        """Stop the MCP servers (their processes end), then exit."""
        await self.stop_mcp_servers()
        self.exit()

    async def stop_mcp_servers(self) -> None:
        """Stop every MCP server of this run and wait until they have stopped."""
        hub = self.runtime.mcp if self.runtime is not None else None
        if hub is None:
            return
        if any(c.status == "ready" for c in hub.connections):
            self.notify("Stopping the MCP servers…", timeout=3)
        await hub.shutdown()

    def _mcp_authorize(self, connection: Any, url: str | None) -> None:
        """Show the address a person must open to authorize the server (OAuth); close it
        once they are back."""
        from workbench.widgets.mcp_authorize import McpAuthorizeModal

        if url is None:
            top = self.screen_stack[-1] if self.screen_stack else None
            if isinstance(top, McpAuthorizeModal) and top.server == connection.name:
                top.dismiss()
            self.notify(f"MCP server {connection.name}: authorized", markup=False)
        else:
            self.push_screen(McpAuthorizeModal(connection.name, url))
        self._refresh_now()

    def _mcp_server_exited(self, connection: Any) -> None:
        from workbench.mcp.hub import describe_failure

        self.notify(
            f"{describe_failure(connection)}\nctrl+p, 'Restart MCP server' starts it again.",
            severity="error",
            timeout=15,
            markup=False,
        )
        self._refresh_now()  # the status bar names it

    def _mcp_tools_changed(self, connection: Any, added: list[str], removed: list[str]) -> None:
        from workbench.bus_events import McpToolsChangedEvent

        self.learn_tools(t for t in self.agent.state.tools if t.source == f"mcp:{connection.name}")
        change = McpToolsChangedEvent(server=connection.name, added=added, removed=removed)
        self.notify(change.text, markup=False)

    def action_mcp_servers(self) -> None:
        from workbench.widgets.mcp_servers import McpServersScreen

        hub = self.runtime.mcp
        if hub is None:
            self.notify(
                "No MCP servers in this run (start one with --mcp, --mcp-url or --mcp-config)",
                severity="warning",
                markup=False,
            )
            return
        self.push_screen(
            McpServersScreen(
                hub,
                self.restart_mcp_server,
                self.open_mcp_catalog,
                disable=self.disable_mcp_server,
                set_roots=self.set_mcp_roots,
                set_log_level=self.set_mcp_log_level,
                workspace=self.runtime.workspace,
                ping=self.ping_mcp_server,
            )
        )

    @work(group="mcp-restart", exit_on_error=False)
    async def disable_mcp_server(self, name: str) -> None:
        """Stop MCP server `name` until it is started again; its tools go."""
        hub = self.runtime.mcp
        assert hub is not None
        await hub.disable(name)
        self.notify(f"MCP server {name} disabled: its tools are gone (r starts it)")
        self._refresh_now()

    @work(group="mcp-log", exit_on_error=False)
    async def set_mcp_log_level(self, name: str, level: Any) -> None:
        """Ask MCP server `name` for log lines of `level` and above."""
        hub = self.runtime.mcp
        assert hub is not None
        said = await hub.set_log_level(name, level)
        self.notify(said, markup=False)

    @work(group="mcp-ping", exit_on_error=False)
    async def ping_mcp_server(self, name: str) -> None:
        """Ping MCP server `name` and say how it answered (or that it is wedged)."""
        from workbench.mcp.failures import McpCallError

        connection = self.runtime.mcp.connection(name)
        try:
            took = await connection.ping()
        except McpCallError as exc:
            wedged = "; F7, r restarts it" if connection.unanswered_ping else ""
            self.notify(f"{exc}{wedged}", severity="error", markup=False)
            return
        self.notify(f"MCP server {name} answered ping in {took:.0f} ms", markup=False)

    @work(group="mcp-roots", exit_on_error=False)
    async def set_mcp_roots(self, name: str, roots: list[Any]) -> None:
        """Offer `roots` to MCP server `name` (it is told: roots/list_changed)."""
        hub = self.runtime.mcp
        assert hub is not None
        await hub.set_roots(roots, name)
        self.notify(
            f"MCP server {name}: {len(roots)} roots now (roots/list_changed sent)", markup=False
        )

    @work(group="mcp-restart", exit_on_error=False)
    async def restart_mcp_server(self, name: str) -> None:
        """Start MCP server `name` again; its tools replace the old ones."""
        hub = self.runtime.mcp
        assert hub is not None
        try:
            connection = await hub.restart(name)
        except (KeyError, RuntimeError) as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return
        if connection.status != "ready":
            self.notify(
                hub.report()[hub.connections.index(connection)],
                severity="error",
                timeout=12,
                markup=False,
            )
            return
        tools = [t for t in hub.tools if t.source == f"mcp:{name}"]
        self.learn_tools(tools)
        self.notify(f"MCP server {name} restarted: {len(tools)} tools", markup=False)
        self._refresh_now()
