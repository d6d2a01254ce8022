"""McpServersScreen: every MCP server of the run, its state, its tools and its logs.

Left, one line per server (its state and tool count); right, the chosen server:
transport and target, what its `initialize` said (name, instructions), its tools and
the ones left out, the lines it logged (`notifications/message`), protocol noise, and
its last stderr lines, and its latest JSON-RPC messages both ways, with the time each
answer took (`w` opens every message, whole, to filter, search and copy: see
`workbench.widgets.mcp_wire`). `r` starts the chosen server again (a running one, wedged
perhaps, is stopped first; a disabled one starts), `d` stops it until `r`, `t` edits
the roots offered to it (the server is told, `roots/list_changed`), `l` changes the
log level it is asked for, `p` pings it (a "ready" server that does not answer is
wedged: `r`); `o` opens its resources, templates and prompts
(`workbench.widgets.mcp_catalog`). Everything a server sent is shown literally.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.mcp.stderr import STDERR_KEPT_LINES
from workbench.sanitize import literal
from workbench.widgets.footer import Footer

STATE_STYLES = {
    "ready": "green",
    "starting": "yellow",
    "failed": "bold red",
    "exited": "bold red",
    "closed": "dim",
    "disabled": "dim",
}


def server_summary(connection: Any) -> Text:
    """One server's line in the list: its name, state and tool count."""
    text = Text(literal(connection.name), style="bold")
    text.append(f"  {connection.status}", style=STATE_STYLES.get(connection.status, ""))
    if connection.status == "ready":
        text.append(f"  {len(connection.tools)} tools", style="dim")
    if connection.authorize_url:
        text.append("  waiting for you to authorize it", style="yellow")
    if connection.status == "ready" and connection.unanswered_ping:
        text.append("  not answering ping", style="bold red")
    return text


def server_details(connection: Any, tool_names: list[str]) -> Text:
    """Everything known about one server, as literal text."""
    config = connection.config
    out = Text()

    def heading(title: str) -> None:
        out.append(f"\n{title}\n", style="bold")

    def lines(rows: list[str], style: str = "") -> None:
        for row in rows or ["(none)"]:
            out.append(f"  {literal(row)}\n", style=style if rows else "dim")

    out.append(literal(connection.name), style="bold")
    out.append(f"  {connection.status}\n", style=STATE_STYLES.get(connection.status, ""))
    out.append(f"{config.transport}: ", style="dim")
    out.append(f"{literal(config.target)}\n")
    if connection.server_info:
        out.append("server: ", style="dim")
        out.append(f"{literal(connection.server_info)}\n")
    if connection.status == "ready" and connection.unanswered_ping:
        out.append(f"{connection.unanswered_ping} (r restarts it)\n", style="bold red")
    elif connection.status == "ready" and connection.ping_ms is not None:
        out.append(f"answered ping in {connection.ping_ms:.0f} ms (p pings again)\n", style="dim")
    if connection.authorize_url:
        heading("Waiting for you to authorize it (OAuth): open this address")
        lines([connection.authorize_url], "yellow")
    heading("Roots offered (t edits them)")
    lines([str(p) for p in connection.client.roots])
    if connection.error:
        heading("Why it stopped")
        lines(connection.error.splitlines(), "red")
    if connection.instructions:
        used = "added to the system prompt" if config.use_instructions else "not used"
        heading(f"Instructions ({used})")
        lines(connection.instructions.splitlines())
    heading(f"Tools ({len(tool_names)})")
    lines(tool_names)
    catalog = connection.catalog
    heading(
        f"Resources ({len(catalog.resources)}), templates ({len(catalog.templates)}), "
        f"prompts ({len(catalog.prompts)}): o opens them"
    )
    lines(
        [str(r.uri) for r in catalog.resources]
        + [t.uri_template for t in catalog.templates]
        + [f"prompt {p.name}" for p in catalog.prompts]
    )
    if catalog.problems:
        lines(catalog.problems, "yellow")
    if connection.dropped:
        heading("Left out of its tool list")
        lines(connection.dropped, "yellow")
    level = connection.client.log_level or "the server's own"
    heading(f"Its log (notifications/message; level {level}: l changes it)")
    lines(list(connection.client.server_log)[-100:])
    heading("Protocol noise")
    lines(list(connection.log)[-50:], "yellow")
    if config.transport == "stdio":
        heading(f"Its last stderr lines (up to {STDERR_KEPT_LINES})")
        lines(connection.stderr_lines(STDERR_KEPT_LINES))
    entries = list(connection.wire.entries)
    heading(f"Wire: {len(entries)} JSON-RPC messages kept (w shows them whole, filtered)")
    lines([f"{e.line()}  {e.text[:160]}" for e in entries[-20:]])
    return out


class McpServersScreen(ModalScreen[None]):
    """The MCP servers of the run (F7)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f7,q", "dismiss", "Close"),
        Binding("r", "restart", "Restart server"),
        Binding("d", "disable", "Disable server"),
        Binding("t", "roots", "Roots"),
        Binding("l", "log_level", "Log level"),
        Binding("w", "wire", "Wire"),
        Binding("p", "ping", "Ping"),
        Binding("o", "catalog", "Resources & prompts"),
    ]

    DEFAULT_CSS = """
    McpServersScreen { align: center middle; }
    McpServersScreen > Horizontal {
        width: 95%; height: 85%; border: thick $accent; background: $surface;
    }
    McpServersScreen OptionList { width: 34; height: 1fr; border-right: solid $panel; }
    McpServersScreen VerticalScroll { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def __init__(
        self,
        hub: Any,
        restart: Callable[[str], Any],
        open_catalog: Callable[[Any], Any],
        disable: Callable[[str], Any] | None = None,
        set_roots: Callable[[str, list[Path]], Any] | None = None,
        set_log_level: Callable[[str, str], Any] | None = None,
        workspace: Path | None = None,
        ping: Callable[[str], Any] | None = None,
    ) -> None:
        super().__init__()
        self.hub = hub
        self._restart = restart
        self._open_catalog = open_catalog
        self._disable = disable
        self._set_roots = set_roots
        self._set_log_level = set_log_level
        self._workspace = workspace
        self._ping = ping

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(*self._options(), id="mcp-servers")
            with VerticalScroll():
                yield Static(id="mcp-server-details")
        yield Footer()

    def on_mount(self) -> None:
        servers = self.query_one(OptionList)
        servers.highlighted = 0 if self.hub.connections else None
        servers.focus()
        self.refresh_servers()
        self.set_interval(1.0, self.refresh_servers)

    def _options(self) -> list[Option]:
        return [Option(server_summary(c), id=c.name) for c in self.hub.connections]

    @property
    def chosen(self) -> Any:
        index = self.query_one(OptionList).highlighted
        return self.hub.connections[index] if index is not None else None

    def refresh_servers(self) -> None:
        servers = self.query_one(OptionList)
        for index, connection in enumerate(self.hub.connections):
            servers.replace_option_prompt_at_index(index, server_summary(connection))
        self._show()

    def on_option_list_option_highlighted(self) -> None:
        self._show()

    def _show(self) -> None:
        connection = self.chosen
        details = self.query_one("#mcp-server-details", Static)
        if connection is None:
            details.update(Text("No MCP servers in this run.", style="dim"))
            return
        names = [t.name for t in self.hub.tools if t.source == f"mcp:{connection.name}"]
        details.update(server_details(connection, names))

    def action_restart(self) -> None:
        connection = self.chosen
        if connection is None:
            return
        if connection.status == "starting":
            self.notify(
                f"MCP server {connection.name} is starting: wait for it (or its timeout)",
                severity="warning",
                markup=False,
            )
            return
        self._restart(connection.name)

    def action_disable(self) -> None:
        connection = self.chosen
        if connection is None or self._disable is None:
            return
        if connection.status == "disabled":
            self.notify(f"MCP server {connection.name} is disabled: r starts it", markup=False)
            return
        self._disable(connection.name)

    def action_wire(self) -> None:
        from workbench.widgets.mcp_wire import McpWireScreen, hub_rows

        connection = self.chosen
        start = f"server:{connection.name}" if connection is not None else ""
        self.app.push_screen(McpWireScreen(hub_rows(self.hub), start))

    def action_log_level(self) -> None:
        """Ask the chosen server for the next log level (debug, info, ... emergency)."""
        from workbench.mcp.capabilities import LOG_LEVELS

        connection = self.chosen
        if connection is None or self._set_log_level is None:
            return
        now = connection.client.log_level
        index = LOG_LEVELS.index(now) + 1 if now in LOG_LEVELS else 0
        self._set_log_level(connection.name, LOG_LEVELS[index % len(LOG_LEVELS)])

    def action_roots(self) -> None:
        """Edit the chosen server's roots: a JSON list of directories."""
        connection = self.chosen
        if connection is None or self._set_roots is None:
            return
        from workbench.mcp.roots import parse_roots
        from workbench.widgets.json_editor import JsonEditModal

        name, set_roots = connection.name, self._set_roots
        base = self._workspace or Path.cwd()

        def submit(value: dict[str, Any]) -> list[Path]:
            roots = value.get("roots")
            if not isinstance(roots, list) or not all(isinstance(v, str) for v in roots):
                raise ValueError('"roots": a list of directories, e.g. [".", "/srv/data"]')
            return parse_roots(roots, base)

        def closed(value: dict[str, Any] | None) -> None:
            if value is not None:
                set_roots(name, submit(value))

        shown = {"roots": [str(p) for p in connection.client.roots]}
        title = f"Roots of MCP server {name} (relative paths from {base})"
        self.app.push_screen(JsonEditModal(title, shown, submit), closed)

    def action_ping(self) -> None:
        """Ping the chosen server: a "ready" one that does not answer is wedged (r)."""
        connection = self.chosen
        if connection is None or self._ping is None:
            return
        if connection.status != "ready":
            self.notify(f"MCP server {connection.name} is {connection.status}", markup=False)
            return
        self._ping(connection.name)

    def action_catalog(self) -> None:
        connection = self.chosen
        if connection is not None:
            self._open_catalog(connection)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
