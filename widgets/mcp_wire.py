"""McpWireScreen: every JSON-RPC message between the workbench and its MCP servers.

Opened from the MCP servers view (F7, `w`), and in replay (`w`) with the messages
the session recorded up to the event shown (`recorded_rows`). Top, a filter: each word must match
(`server:NAME`, `method:NAME`, `→` or `sent`, `←` or `received`, else any text of
the message, case-insensitive); left, the messages that match, oldest first, with
their server, direction, time and what they are; right, the highlighted one's JSON
in full, indented. `c` copies it. Everything a server sent is shown literally.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from workbench.mcp.wire import WireEntry
from workbench.sanitize import literal
from workbench.widgets.footer import Footer
from workbench.widgets.terminal_safety import LiteralInput

SHOWN = 2000
"""How many of the matching messages the list shows (the newest)."""


def matches(words: list[str], server: str, entry: Any) -> bool:
    """Whether one message matches every word of the filter."""
    for word in words:
        low = word.lower()
        if low in ("→", "sent"):
            ok = entry.outgoing
        elif low in ("←", "received"):
            ok = not entry.outgoing
        elif low.startswith("server:"):
            ok = server.lower() == low[7:]
        elif low.startswith("method:"):
            ok = low[7:] in entry.method.lower()
        else:
            ok = low in entry.summary.lower() or low in entry.text.lower()
        if not ok:
            return False
    return True


def pretty(text: str) -> str:
    """A message's JSON indented (as it came if it does not parse)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


Rows = Callable[[], list[tuple[str, WireEntry]]]
"""The messages to show: (server, entry), oldest first."""


def hub_rows(hub: Any) -> Rows:
    """The messages every server of `hub` keeps now (the live wire)."""

    def rows() -> list[tuple[str, WireEntry]]:
        found = [(c.name, e) for c in hub.connections for e in list(c.wire.entries)]
        return sorted(found, key=lambda row: row[1].clock)

    return rows


def recorded_rows(events: Sequence[Any]) -> list[tuple[str, WireEntry]]:
    """The messages a session recorded among `events` (`McpWireEvent`s)."""
    return [
        (e.server, WireEntry(e.at, e.outgoing, e.summary, e.text, e.method, e.timestamp / 1000))
        for e in events
        if e.type == "mcp_wire"
    ]


class McpWireScreen(ModalScreen[None]):
    """The messages `rows` gives (see `hub_rows`, `recorded_rows`); `start` prefills
    the filter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("c", "copy", "Copy message"),
        Binding("slash", "search", "Filter"),
    ]

    DEFAULT_CSS = """
    McpWireScreen { align: center middle; }
    McpWireScreen > Vertical {
        width: 95%; height: 90%; border: thick $accent; background: $surface;
    }
    McpWireScreen #wire-filter { margin: 0 1; }
    McpWireScreen OptionList { width: 64; height: 1fr; border-right: solid $panel; }
    McpWireScreen VerticalScroll { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def __init__(self, rows: Rows, start: str = "") -> None:
        super().__init__()
        self.source = rows
        self.start = start
        self.rows: list[tuple[str, Any]] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield LiteralInput(
                self.start,
                placeholder="filter: server:NAME method:NAME → ← or any text",
                id="wire-filter",
            )
            with Horizontal():
                yield OptionList(id="wire-list")
                with VerticalScroll():
                    yield Static(id="wire-message")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one(OptionList).focus()

    def reload(self) -> None:
        words = self.query_one("#wire-filter", Input).value.split()
        rows = [(s, e) for s, e in self.source() if matches(words, s, e)]
        self.rows = rows[-SHOWN:]
        listing = self.query_one(OptionList)
        listing.clear_options()
        listing.add_options([Option(self._line(server, entry)) for server, entry in self.rows])
        if self.rows:
            listing.highlighted = len(self.rows) - 1
        self._show()

    def _line(self, server: str, entry: Any) -> Text:
        text = Text(literal(server), style="bold")
        text.append(f" {'→' if entry.outgoing else '←'} ", style="cyan")
        text.append(literal(entry.summary))
        return text

    @property
    def chosen(self) -> tuple[str, Any] | None:
        index = self.query_one(OptionList).highlighted
        return self.rows[index] if index is not None and index < len(self.rows) else None

    @on(OptionList.OptionHighlighted)
    def _show(self) -> None:
        shown = self.query_one("#wire-message", Static)
        chosen = self.chosen
        if chosen is None:
            shown.update(Text("No message matches.", style="dim"))
            return
        server, entry = chosen
        head = Text(f"{literal(server)}  {'sent' if entry.outgoing else 'received'}", "bold")
        head.append(f"  at {entry.at:.3f} s  {literal(entry.summary)}\n\n", style="dim")
        head.append(literal(pretty(entry.text)))
        shown.update(head)

    @on(Input.Changed, "#wire-filter")
    def _filtered(self) -> None:
        self.reload()

    @on(Input.Submitted, "#wire-filter")
    def _to_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_search(self) -> None:
        self.query_one("#wire-filter", Input).focus()

    def action_copy(self) -> None:
        chosen = self.chosen
        if chosen is not None:
            self.app.copy_to_clipboard(chosen[1].text)
            self.notify(f"Copied the message ({len(chosen[1].text):,} characters)")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
