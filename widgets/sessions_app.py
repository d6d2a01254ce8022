"""`workbench sessions` with no flags: the session library as a screen.

A search box, filters (model, tool, since, errors, denied) and a table of sessions,
newest first (best match first while searching). Enter on a row exits with its path;
`sessions_screen` then opens it in replay and comes back to the list, as it was, when
replay quits. The index is brought up to date in a thread (its own connection), so a
directory of new files never holds up the first screen. Every cell is a literal
`Text` (the table would read a string as markup).
"""

from __future__ import annotations

import argparse
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Checkbox, DataTable, Footer, Input, Static

from widgets.terminal_safety import SafeTextApp
from workbench.cli.sessions import since, when
from workbench.sanitize import literal, one_line
from workbench.sessions.library import Filters, Library

SHOWN = 1000
"""Rows the table holds (the newest, or the best matches)."""


@dataclass
class Query:
    """What the screen shows: kept across a trip to replay and back."""

    search: str = ""
    filters: Filters | None = None
    since_text: str = ""


class SessionsApp(SafeTextApp, App[Path | None]):
    TITLE = "Agent Workbench · sessions"
    DEFAULT_CSS = """
    #search { width: 1fr; }
    #filters { height: auto; }
    #filters Input { width: 1fr; }
    #filters Checkbox { width: auto; }
    #table { height: 1fr; }
    #status { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_search", "Search", show=True),
        Binding("escape", "focus_table", "Table", show=False),
        Binding("ctrl+q,q", "quit", "Quit", priority=False),
    ]

    def __init__(self, directory: Path | None = None, query: Query | None = None) -> None:
        super().__init__()
        self.library = Library(directory)
        self.query_state = query or Query()
        self.shown: list[Path] = []

    def compose(self) -> ComposeResult:
        state = self.query_state
        filters = state.filters or Filters()
        yield Input(state.search, placeholder="search prompts, tools, arguments, results (/)",
                    id="search")
        with Horizontal(id="filters"):
            yield Input(filters.model or "", placeholder="model", id="model")
            yield Input(filters.tool or "", placeholder="tool", id="tool")
            yield Input(state.since_text, placeholder="since (7d, 2026-11-30)", id="since")
            yield Checkbox("errors", filters.errors, id="errors")
            yield Checkbox("denied", filters.denied, id="denied")
        yield DataTable(id="table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("recorded", "outcome", "model", "turns", "calls", "errors",
                          "denied", "first prompt / match")
        self.reload()
        table.focus()
        self.refresh_index()

    @work(thread=True, exclusive=True)
    def refresh_index(self) -> None:
        try:
            with Library(self.library.directory) as library:  # a connection of its own
                report = library.refresh()
        except (OSError, sqlite3.Error) as exc:
            self.call_from_thread(self._status, f"cannot index the sessions: {exc}")
            return
        if report.indexed or report.removed:
            self.call_from_thread(self.reload)

    def current(self) -> tuple[Filters, str, str | None]:
        """The filters, the search text, and why a filter is ignored (if one is)."""
        problem = None
        since_text = self.query_one("#since", Input).value.strip()
        moment = None
        if since_text:
            try:
                moment = since(since_text)
            except argparse.ArgumentTypeError as exc:
                problem = str(exc)
        filters = Filters(
            model=self.query_one("#model", Input).value.strip() or None,
            tool=self.query_one("#tool", Input).value.strip() or None,
            errors=self.query_one("#errors", Checkbox).value,
            denied=self.query_one("#denied", Checkbox).value,
            since=moment,
            limit=SHOWN,
        )
        return filters, self.query_one("#search", Input).value, problem

    def reload(self) -> None:
        filters, search, problem = self.current()
        self.query_state = Query(search, replace(filters), self.query_one("#since", Input).value)
        try:
            entries = self.library.entries(filters, search if search.strip() else None)
        except (OSError, sqlite3.Error) as exc:
            self._status(f"cannot read the index: {exc}")
            return
        table = self.query_one(DataTable)
        table.clear()
        self.shown = []
        for entry in entries:
            data: dict[str, Any] = entry.data
            detail = entry.snippet or data["prompt"] or data["problem"]
            table.add_row(
                Text(when(data["created"])), Text(data["outcome"]),
                Text(one_line(data["model"], 24)),
                *(Text(str(data[k]), justify="right")
                  for k in ("turns", "calls", "errors", "denials")),
                Text(one_line(" ".join(detail.split()), 80)),
                key=str(entry.path),
            )
            self.shown.append(entry.path)
        count = f"{len(entries)} session{'s' if len(entries) != 1 else ''}"
        more = f" (the first {SHOWN})" if len(entries) >= SHOWN else ""
        note = f"; since ignored: {problem}" if problem else ""
        self._status(f"{count}{more} in {self.library.directory}{note} · Enter opens replay")

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(literal(text)))

    @on(Input.Changed)
    @on(Checkbox.Changed)
    def _changed(self) -> None:
        self.reload()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.query_one(DataTable).focus()

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.exit(Path(event.row_key.value))

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_focus_table(self) -> None:
        self.query_one(DataTable).focus()

    def on_unmount(self) -> None:
        self.library.close()


def sessions_screen(directory: Path | None, query: Query) -> int:
    """The screen; Enter opens replay, and quitting replay comes back here."""
    from widgets.replay_app import replay_main

    while True:
        app = SessionsApp(directory, query)
        path = app.run()
        if path is None:
            return 0
        query = app.query_state
        replay_main([str(path)])
