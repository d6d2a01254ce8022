"""The session library as a screen: `SessionsScreen`, in `workbench sessions` and the app.

A search box, filters (model, tool, since, errors, denied) and a table of sessions,
newest first (best match first while searching). The index is brought up to date in
a thread (its own connection), so a directory of new files never holds up the first
screen. Every cell is a literal `Text` (the table would read a string as markup).

Enter opens the session in replay. In `workbench sessions` (`SessionsApp`) the app
exits with the path; the command line (`workbench.cli.sessions.sessions_screen`) runs
replay and comes back to the list, as it was, when replay quits. Pushed over the main
app, the screen suspends the app and runs `workbench replay FILE` in the terminal,
coming back here after; where the app cannot be suspended (a headless or web driver)
it says the command to run instead.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Input, Static

from workbench.sanitize import literal, one_line
from workbench.sessions.dates import since, when
from workbench.sessions.library import Filters, Library
from workbench.widgets.footer import Footer
from workbench.widgets.terminal_safety import SafeTextApp

SHOWN = 1000
"""Rows the table holds (the newest, or the best matches)."""


@dataclass
class Query:
    """What the screen shows: kept across a trip to replay and back."""

    search: str = ""
    filters: Filters | None = None
    since_text: str = ""


class SessionsScreen(Screen[None]):
    """The library of `directory` (default: where runs are recorded)."""

    DEFAULT_CSS = """
    SessionsScreen #search { width: 1fr; }
    SessionsScreen #filters { height: auto; }
    SessionsScreen #filters Input { width: 1fr; }
    SessionsScreen #filters Checkbox { width: auto; }
    SessionsScreen #table { height: 1fr; }
    SessionsScreen #status { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_search", "Search", show=True),
        Binding("escape", "escape", "Close", show=False),
        Binding("plus", "more", f"{SHOWN} more", show=False),
        Binding("m", "mark", "Mark A/B", priority=False),
        Binding("d", "diff", "Diff A B", priority=False),
        Binding("q", "close", "Close", priority=False),
    ]

    def __init__(
        self,
        directory: Path | None = None,
        query: Query | None = None,
        *,
        on_open: Callable[[Path], Any] | None = None,
    ) -> None:
        """`on_open(path)`: what Enter does (default: replay in the terminal)."""
        super().__init__()
        self.library = Library(directory)
        self.query_state = query or Query()
        self.shown: list[Path] = []
        self.limit = SHOWN
        """How many sessions are listed (+ lists more)."""
        self._listed: Any = None
        """What the table shows (the query and every row's data): a reload that finds
        the same leaves the table, its cursor and the status line as they are."""
        self.marked: list[Path] = []
        """Sessions marked to diff (A, then B)."""
        self.on_open = on_open or self.replay_in_terminal

    def compose(self) -> ComposeResult:
        state = self.query_state
        filters = state.filters or Filters()
        yield Input(
            state.search, placeholder="search prompts, tools, arguments, results (/)", id="search"
        )
        with Horizontal(id="filters"):
            yield Input(filters.model or "", placeholder="model", id="model")
            yield Input(filters.tool or "", placeholder="tool", id="tool")
            yield Input(state.since_text, placeholder="since (7d, 2026-11-30)", id="since")
            yield Input(filters.outcome or "", placeholder="outcome", id="outcome")
            yield Checkbox("errors", filters.errors, id="errors")
            yield Checkbox("denied", filters.denied, id="denied")
        yield DataTable(id="table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("", key="mark", width=1)  # A / B: marked to diff
        table.add_columns(
            "recorded",
            "file",
            "outcome",
            "model",
            "turns",
            "calls",
            "errors",
            "denied",
            "first prompt / match",
        )
        self.call_after_refresh(self.reload)  # mounted by then: an index already up to date shows
        table.focus()
        self.refresh_index()

    @work(thread=True, exclusive=True)
    def refresh_index(self) -> None:
        try:
            with Library(self.library.directory) as library:  # a connection of its own
                report = library.refresh()
        except (OSError, sqlite3.Error) as exc:
            self.app.call_from_thread(self._status, f"cannot index the sessions: {exc}")
            return
        if report.indexed or report.removed:
            self.app.call_from_thread(self.reload)

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
            outcome=self.query_one("#outcome", Input).value.strip() or None,
            denied=self.query_one("#denied", Checkbox).value,
            since=moment,
            limit=self.limit,
        )
        return filters, self.query_one("#search", Input).value, problem

    def reload(self) -> None:
        if not self.is_mounted:
            return
        filters, search, problem = self.current()
        self.query_state = Query(search, replace(filters), self.query_one("#since", Input).value)
        try:
            entries = self.library.entries(filters, search if search.strip() else None)
        except (OSError, sqlite3.Error) as exc:
            self._status(f"cannot read the index: {exc}")
            return
        listed = (self.query_state, problem, [(e.path, e.data, e.snippet) for e in entries])
        if listed == self._listed:  # a background refresh that changed nothing
            return
        self._listed = listed
        table = self.query_one(DataTable)
        table.clear()
        self.shown = []
        for entry in entries:
            data: dict[str, Any] = entry.data
            detail = entry.snippet or data["prompt"] or data["problem"]
            table.add_row(
                self._mark_of(entry.path),
                Text(when(data["created"])),
                Text(("⑂ " if data["parent"] else "") + one_line(entry.path.name, 32)),
                Text(data["outcome"]),
                Text(one_line(data["model"], 24)),
                *(
                    Text(str(data[k]), justify="right")
                    for k in ("turns", "calls", "errors", "denials")
                ),
                Text(one_line(" ".join(detail.split()), 80)),
                key=str(entry.path),
            )
            self.shown.append(entry.path)
        count = f"{len(entries)} session{'s' if len(entries) != 1 else ''}"
        more = f" (the first {self.limit}: + shows more)" if len(entries) >= self.limit else ""
        note = f"; since ignored: {problem}" if problem else ""
        self._status(f"{count}{more} in {self.library.directory}{note} · Enter opens replay")

    def _mark_of(self, path: Path) -> Text:
        labels = dict(zip(self.marked, "AB", strict=False))
        return Text(labels.get(path, ""), style="bold reverse" if path in labels else "")

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
            self.on_open(Path(event.row_key.value))

    def replay_in_terminal(self, path: Path) -> None:
        """Suspend the app, run `workbench replay FILE`, come back to this list."""
        command = [sys.executable, "-m", "workbench", "replay", str(path)]
        try:
            with self.app.suspend():
                subprocess.run(command, check=False)
        except SuspendNotSupported:
            self.notify(f"to replay it, run: workbench replay {path}", title="Replay", timeout=15)
            self._status(f"replay cannot open here; run: workbench replay {path}")
            return
        self.refresh_index()  # a fork made in replay is a new session

    def action_mark(self) -> None:
        """Mark the highlighted session as A (then B); again, unmark it."""
        table = self.query_one(DataTable)
        if not 0 <= table.cursor_row < len(self.shown):
            return
        path = self.shown[table.cursor_row]
        if path in self.marked:
            self.marked.remove(path)
        else:
            self.marked = [*self.marked, path][-2:]  # a third mark drops the oldest
        for shown in self.shown:
            table.update_cell(str(shown), "mark", self._mark_of(shown))
        names = " and ".join(
            f"{label}: {p.name}" for label, p in zip("AB", self.marked, strict=False)
        )
        more = " · d diffs them" if len(self.marked) == 2 else " · mark another (m) to diff"
        self._status(f"marked {names}{more}" if self.marked else "no session marked")

    def action_diff(self) -> None:
        if len(self.marked) != 2:
            self._status("mark two sessions (m on each, A then B), then d to diff them")
            return
        from workbench.widgets.diff_screen import DiffScreen

        a, b = self.marked
        self.app.push_screen(DiffScreen(a, b))

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_focus_table(self) -> None:
        self.query_one(DataTable).focus()

    def action_escape(self) -> None:
        """From a search or filter field: back to the table; from the table: close."""
        table = self.query_one(DataTable)
        if table.has_focus:
            self.action_close()
        else:
            table.focus()

    def action_more(self) -> None:
        """List the next sessions too (they are listed a thousand at a time)."""
        if len(self.shown) >= self.limit:
            self.limit += SHOWN
            self.reload()

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.dismiss(None)
        else:  # the app's own screen (`workbench sessions`)
            self.app.exit()

    def on_unmount(self) -> None:
        self.library.close()


class SessionsApp(SafeTextApp, App[Path | None]):
    """`workbench sessions`: the screen on its own; Enter exits with the session's path."""

    TITLE = "Agent Workbench · sessions"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", show=False)]

    def __init__(self, directory: Path | None = None, query: Query | None = None) -> None:
        super().__init__()
        self.sessions = SessionsScreen(directory, query, on_open=self.exit)

    def get_default_screen(self) -> Screen[Any]:
        return self.sessions

    @property
    def shown(self) -> list[Path]:
        return self.sessions.shown

    @property
    def query_state(self) -> Query:
        return self.sessions.query_state
