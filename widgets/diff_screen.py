"""Two recorded sessions side by side: `workbench diff A B --screen`, or `d` in the library.

One row for each field either session has, in the alignment `workbench diff` prints
(`workbench.sessions.diff.align`: turn N with turn N, call K with call K): the
prompt, the model's text, how its reply ended, and each call's tool, arguments,
decision, result and error. Rows that differ are marked; the first divergence is
selected when the screen opens, and `n` / `p` move to the next or previous
difference. Below the table, the selected row in full (a line diff for long text).
Timings are shown by `workbench diff`, not here. Every text from the files is a
literal `Text`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from workbench.sanitize import literal, one_line
from workbench.sessions.diff import Difference, Turn, align, turns_of, value_lines
from workbench.widgets.footer import Footer
from workbench.widgets.terminal_safety import SafeTextApp

MIN_CELL = 12
"""The fewest characters of a value the A and B columns show, however narrow the
screen (the pane below shows all of it)."""


def load_turns(path: Path) -> list[Turn]:
    """The session's turns (raises `SessionError` when it cannot be read)."""
    from workbench.sessions.reader import read_session

    return turns_of(read_session(path))


class DiffScreen(Screen[None]):
    DEFAULT_CSS = """
    DiffScreen #heading { height: auto; padding: 0 1; }
    DiffScreen #rows { height: 2fr; }
    DiffScreen #detail-box { height: 1fr; border-top: solid $primary; padding: 0 1; }
    DiffScreen #status { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "difference(1)", "Next difference", key_display="n/p"),
        Binding("p", "difference(-1)", "Previous difference", show=False),
        Binding("q,escape", "close", "Close"),
    ]

    def __init__(
        self, a: Path, b: Path, turns: tuple[list[Turn], list[Turn]] | None = None
    ) -> None:
        """`turns`: both sessions' turns, if already read (else they are read here)."""
        super().__init__()
        self.paths = (a, b)
        self.turns = turns
        self.rows: list[Difference] = []
        self.differences: list[int] = []
        """Row indexes of the rows that differ, in order."""
        self._filled_for = 0
        """The screen width the table's values were cut for."""

    def compose(self) -> ComposeResult:
        a, b = (literal(str(path)) for path in self.paths)
        yield Static(Text(f"reading {a} and {b}"), id="heading")
        yield DataTable(id="rows", cursor_type="row")
        with VerticalScroll(id="detail-box"):
            yield Static("", id="detail")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        if self.turns is None:
            self.read()
        else:
            self.show(*self.turns)

    @work(thread=True, exclusive=True)
    def read(self) -> None:
        from workbench.sessions.reader import SessionError

        try:
            a, b = (load_turns(path) for path in self.paths)
        except SessionError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self.show, a, b)

    def _failed(self, problem: str) -> None:
        self.query_one("#heading", Static).update(Text(f"cannot diff: {literal(problem)}"))

    def show(self, a: list[Turn], b: list[Turn]) -> None:
        self.rows = align(a, b)
        self.differences = [i for i, row in enumerate(self.rows) if row.differs]
        table = self.query_one(DataTable)
        self._fill(table)
        count = len(self.differences)
        if count:
            first = self.rows[self.differences[0]]
            verdict = f"first divergence: {literal(first.where)}: {first.what}"
        else:
            verdict = "the same: every prompt, reply, call, decision and result"
        heading = (
            f"A: {literal(str(self.paths[0]))} ({len(a)} turns)\n"
            f"B: {literal(str(self.paths[1]))} ({len(b)} turns)\n{verdict}"
        )
        self.query_one("#heading", Static).update(Text(heading))
        table.focus()
        if self.rows:
            start = self.differences[0] if count else 0
            table.move_cursor(row=start)
            self.describe(start)

    def cell_width(self) -> int:
        """Characters of a value in the A and B columns: half of what the screen's width
        leaves once the mark, "where" and "what" columns (and each column's padding and
        the scroll bar) are placed."""
        where = max((len(row.where) for row in self.rows), default=0)
        what = max((len(row.what) for row in self.rows), default=0)
        spare = self.size.width - (1 + where + what) - 2 * 5 - 2
        return max(MIN_CELL, spare // 2)

    def _fill(self, table: DataTable[Any]) -> None:
        """The table's rows, values cut to fit the screen's width."""
        cell = self.cell_width()
        self._filled_for = self.size.width
        row_at = table.cursor_row
        table.clear(columns=True)
        table.add_columns("", "where", "what", "A", "B")
        previous = None
        for row in self.rows:
            style = "bold red" if row.differs else ""
            where = "" if row.where == previous else row.where
            previous = row.where
            table.add_row(
                Text("≠" if row.differs else "", style=style),
                Text(literal(where)),
                Text(row.what, style=style),
                Text(one_line(" ".join(row.a.split()), cell) or "(none)", style=style),
                Text(one_line(" ".join(row.b.split()), cell) or "(none)", style=style),
            )
        if self.rows:
            table.move_cursor(row=min(row_at, len(self.rows) - 1))

    def on_resize(self) -> None:
        if self.rows and self.size.width != self._filled_for:
            self._fill(self.query_one(DataTable))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.describe(event.cursor_row)

    def describe(self, index: int) -> None:
        """The row in full below the table, and where it is among the differences."""
        if not 0 <= index < len(self.rows):
            return
        row = self.rows[index]
        lines = [f"{literal(row.where)}: {row.what}", *value_lines(row.a, row.b)]
        self.query_one("#detail", Static).update(Text("\n".join(lines)))
        count = len(self.differences)
        if index in self.differences:
            where = f"difference {self.differences.index(index) + 1} of {count}"
        else:
            where = f"{count} difference{'s' if count != 1 else ''}; this row is the same"
        self._status(f"{where} · row {index + 1} of {len(self.rows)}")

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    def action_difference(self, step: int) -> None:
        if not self.differences:
            self._status("no differences")
            return
        table = self.query_one(DataTable)
        here = table.cursor_row
        ahead = [i for i in self.differences if (i > here if step > 0 else i < here)]
        if not ahead:
            self._status(f"no {'later' if step > 0 else 'earlier'} difference")
            return
        table.move_cursor(row=ahead[0] if step > 0 else ahead[-1])

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.dismiss(None)
        else:
            self.app.exit()


class DiffApp(SafeTextApp, App[None]):
    """`workbench diff A B --screen`."""

    TITLE = "Agent Workbench · diff"

    def __init__(
        self, a: Path, b: Path, turns: tuple[list[Turn], list[Turn]] | None = None
    ) -> None:
        super().__init__()
        self.diff = DiffScreen(a, b, turns)

    def get_default_screen(self) -> Screen[Any]:
        return self.diff
