"""ToolBatchView: the tool calls of one assistant message, one compact two-line card each.

One widget draws the whole batch (not one widget per call), so a run with a thousand
calls stays a few dozen widgets and the screen keeps up. Each card shows the tool's
label, its arguments, a stage badge, its time and the first line of its result (or
live output). Click a card, or move with ↑/↓ and Enter, to inspect it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from widgets.render import compact_json, format_ms, stage_badge
from workbench.sanitize import one_line
from workbench.view.records import ToolCallRecord

CARD_HEIGHT = 2
BAR = "▌"
SLOW_AFTER_MS = 10_000.0
"""A running call's time turns into a warning after this long."""


class ToolBatchView(Widget, can_focus=True):
    """The calls of one assistant message. Posts `Selected` when one is picked."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Inspect", show=False),
        Binding("up,k", "move(-1)", "Previous call", show=False),
        Binding("down,j", "move(1)", "Next call", show=False),
    ]

    DEFAULT_CSS = """
    ToolBatchView { height: auto; margin: 1 0 0 1; padding: 0 1 0 0; }
    ToolBatchView:focus { background: $boost; }
    """

    @dataclass
    class Selected(Message):
        """The user picked a call."""

        tool_call_id: str

    def __init__(
        self, records: list[ToolCallRecord], labels: dict[str, str], slow_after_ms: float = SLOW_AFTER_MS
    ) -> None:
        super().__init__()
        self.records = records
        self.labels = labels
        self.selected_id: str | None = None
        self.cursor = 0
        self.now_ms = 0.0
        self.slow_after_ms = slow_after_ms
        self._revs: list[int] = []

    # -- data ------------------------------------------------------------------------

    def set_records(self, records: list[ToolCallRecord]) -> None:
        if [r.id for r in records] != [r.id for r in self.records]:
            self.records = records
            self._revs = []
            self.refresh(layout=True)

    def sync(self, now_ms: float) -> None:
        """Redraw if a call changed, or to tick the elapsed time of running calls."""
        revs = [r.rev for r in self.records]
        ticking = any(r.started_at is not None and not r.finished for r in self.records)
        if revs == self._revs and not ticking:
            return
        self._revs = revs
        self.now_ms = now_ms
        self.refresh()

    def set_selected(self, tool_call_id: str | None) -> None:
        ids = [r.id for r in self.records]
        if tool_call_id in ids:
            self.cursor = ids.index(tool_call_id)
        if tool_call_id != self.selected_id:
            self.selected_id = tool_call_id
            self.refresh()

    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    # -- drawing ---------------------------------------------------------------------

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[no-untyped-def, override]
        return CARD_HEIGHT * len(self.records)

    def render(self) -> Group:
        return Group(*(self._card(r) for r in self.records))

    def _elapsed(self, record: ToolCallRecord) -> float:
        if record.started_at is None:
            return 0.0
        end = record.ended_at if record.ended_at is not None else self.now_ms
        return max(0.0, end - record.started_at)

    def _card(self, record: ToolCallRecord) -> Table:
        label = self.labels.get(record.name, record.name)
        selected = record.id == self.selected_id
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(label + " ", style="bold")
        if label != record.name:
            head.append(record.name + " ", style="dim")
        head.append(" ")
        args = record.validated or record.parsed
        if args:
            head.append(compact_json(args, 200), style="italic")
        elif record.raw:
            head.append(one_line(record.raw, 200), style="italic")
        badge = stage_badge(record.stage)
        if record.injected:
            badge.append(" injected", style="bold yellow")
        if record.started_at is not None:
            elapsed = self._elapsed(record)
            slow = not record.finished and elapsed > self.slow_after_ms
            badge.append(f" {format_ms(elapsed):>6}", style="bold yellow reverse" if slow else "dim")
        grid = Table.grid(expand=True)
        grid.add_column(width=1)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        bar = Text(BAR, style=_bar_style(record, selected))
        grid.add_row(bar, head, badge)
        grid.add_row(Text(BAR, style=_bar_style(record, selected)), _second_line(record), "")
        if selected:
            grid.style = Style(bgcolor="#2c2c44")
        return grid

    # -- input -----------------------------------------------------------------------

    def _on_click(self, event: events.Click) -> None:
        index = event.y // CARD_HEIGHT
        if 0 <= index < len(self.records):
            self.cursor = index
            self.post_message(self.Selected(self.records[index].id))

    def on_focus(self) -> None:
        if self.records:
            self.cursor = min(self.cursor, len(self.records) - 1)
            self.post_message(self.Selected(self.records[self.cursor].id))

    def action_select(self) -> None:
        if self.records:
            self.post_message(self.Selected(self.records[self.cursor].id))

    def action_move(self, step: int) -> None:
        index = self.cursor + step
        if 0 <= index < len(self.records):
            self.cursor = index
            self.post_message(self.Selected(self.records[index].id))
            self.scroll_visible_row(index)
            return
        batches = list(self.screen.query(ToolBatchView))
        position = batches.index(self) + (1 if step > 0 else -1)
        if 0 <= position < len(batches):
            other = batches[position]
            other.cursor = 0 if step > 0 else len(other.records) - 1
            other.focus()
            other.scroll_visible_row(other.cursor)

    def scroll_visible_row(self, index: int) -> None:
        """Scroll the timeline so that card `index` is on screen."""
        from textual.containers import ScrollableContainer
        from textual.geometry import Region

        scroller = next((a for a in self.ancestors if isinstance(a, ScrollableContainer)), None)
        if scroller is None:
            return
        top = self.region.y - scroller.region.y + int(scroller.scroll_y) + index * CARD_HEIGHT
        scroller.scroll_to_region(Region(0, top, 1, CARD_HEIGHT), animate=False, immediate=True)


def _bar_style(record: ToolCallRecord, selected: bool) -> str:
    if selected:
        return "bold #ffa62b"
    return {
        "invalid": "red", "error": "red", "denied": "magenta", "aborted": "#ff8700",
        "running": "cyan", "after_hook": "cyan", "awaiting_approval": "magenta", "paused": "yellow",
        "done": "green",
    }.get(record.stage, "grey50")


def _second_line(record: ToolCallRecord) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if record.stage == "invalid" and record.arg_error:
        text.append("↳ " + one_line(record.arg_error, 200), style="red")
    elif record.result is not None:
        result = record.result_text
        text.append("↳ " + (one_line(result, 200) or "(no text)"), style="red" if record.is_error else "dim")
        lines = result.count("\n") + 1 if result.strip() else 0
        if lines > 1:
            text.append(f"  ({lines} lines)", style="dim italic")
    elif record.output:
        last = record.output.rstrip().splitlines()[-1] if record.output.strip() else ""
        text.append("… " + one_line(last, 200), style="cyan")
    elif record.stage == "awaiting_approval":
        text.append("↳ waiting for your decision", style="magenta")
    elif record.stage == "paused":
        text.append("↳ paused before it runs", style="yellow")
    return text
