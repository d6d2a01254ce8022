"""ToolCallCard: one tool call in the timeline, compact: label, stage, time, first result line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from widgets.render import compact_json, format_ms, stage_badge
from workbench.sanitize import one_line
from workbench.view.records import ToolCallRecord


class ToolCallCard(Widget, can_focus=True):
    """A compact card for one call. Click or Enter selects it for the inspector."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Inspect", show=False),
        Binding("up,k", "move(-1)", "Previous call", show=False),
        Binding("down,j", "move(1)", "Next call", show=False),
    ]

    DEFAULT_CSS = """
    ToolCallCard {
        height: 2;
        margin: 0 0 0 2;
        padding: 0 1;
        border-left: thick $panel-lighten-2;
        &:hover { background: $boost; }
        &:focus { background: $boost; border-left: thick $accent; }
        &.-selected { border-left: thick $accent; background: $accent 15%; }
        &.-error { border-left: thick $error; }
        &.-running { border-left: thick $primary; }
        &.-waiting { border-left: thick $warning; }
        &.-slow { border-left: thick $warning; }
    }
    """

    @dataclass
    class Selected(Message):
        """The user picked this call."""

        tool_call_id: str

    def __init__(self, record: ToolCallRecord, label: str, now_ms: float = 0.0) -> None:
        super().__init__(id=f"card-{_safe_id(record.id)}")
        self.record = record
        self.label = label
        self.rendered_rev = -1
        self.now_ms = now_ms
        self.slow_after_ms = 10_000.0

    def sync(self, now_ms: float) -> None:
        """Redraw if the record changed (or if it is running, to tick its elapsed time)."""
        record = self.record
        ticking = record.started_at is not None and not record.finished
        if record.rev == self.rendered_rev and not ticking:
            return
        self.rendered_rev = record.rev
        self.now_ms = now_ms
        self.set_class(record.stage in ("error", "invalid", "denied", "aborted"), "-error")
        self.set_class(record.stage in ("running", "after_hook"), "-running")
        self.set_class(record.stage in ("awaiting_approval", "paused"), "-waiting")
        self.set_class(ticking and self._elapsed() > self.slow_after_ms, "-slow")
        self.refresh()

    def _elapsed(self) -> float:
        record = self.record
        if record.started_at is None:
            return 0.0
        end = record.ended_at if record.ended_at is not None else self.now_ms
        return max(0.0, end - record.started_at)

    def render(self) -> Table:
        record = self.record
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(self.label + " ", style="bold")
        if self.label != record.name:
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
            elapsed = self._elapsed()
            style = "bold yellow" if not record.finished and elapsed > self.slow_after_ms else "dim"
            badge.append(f" {format_ms(elapsed):>6}", style=style)
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        grid.add_row(head, badge)
        line = self._second_line() or Text("")
        line.no_wrap = True
        line.overflow = "ellipsis"
        grid.add_row(line, "")
        return grid

    def _second_line(self) -> Text | None:
        record = self.record
        if record.stage == "invalid" and record.arg_error:
            return Text("↳ " + one_line(record.arg_error, 100), style="red")
        if record.result is not None:
            style = "red" if record.is_error else "dim"
            text = record.result_text
            line = Text("↳ " + (one_line(text, 100) or "(no text)"), style=style)
            lines = text.count("\n") + 1 if text.strip() else 0
            if lines > 1:
                line.append(f"  ({lines} lines)", style="dim italic")
            return line
        if record.output:
            last = record.output.rstrip().splitlines()[-1] if record.output.strip() else ""
            return Text("… " + one_line(last, 100), style="cyan")
        if record.stage == "awaiting_approval":
            return Text("↳ waiting for your decision", style="magenta")
        if record.stage == "paused":
            return Text("↳ paused before it runs", style="yellow")
        return None

    def on_click(self) -> None:
        self.post_message(self.Selected(self.record.id))

    def on_focus(self) -> None:
        self.post_message(self.Selected(self.record.id))

    def action_select(self) -> None:
        self.post_message(self.Selected(self.record.id))

    def action_move(self, step: int) -> None:
        cards = list(self.screen.query(ToolCallCard))
        index = cards.index(self) + step
        if 0 <= index < len(cards):
            cards[index].focus()
            cards[index].scroll_visible()


def _safe_id(call_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in call_id)
