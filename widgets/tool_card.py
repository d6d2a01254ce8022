"""Tool-call cards: two lines a call, drawn straight into strips.

The first line has the tool's label, its arguments, a stage badge and its time; the
second the first line of its result, its live output or what it waits for. A card is
drawn without Rich tables or layout (a thousand calls must stay cheap), and the
timeline caches it until the call, the selection or the ticking time changes.
"""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from widgets.render import compact_json, format_ms, stage_badge
from workbench.sanitize import one_line
from workbench.view.records import ToolCallRecord

CARD_HEIGHT = 2
BAR = "▌"
SLOW_AFTER_MS = 10_000.0
"""A running call's time turns into a warning after this long."""


def card_key(record: ToolCallRecord, selected: bool, now_ms: float, slow_after_ms: float) -> tuple:
    """Everything a card's drawing depends on besides the width."""
    if record.started_at is None or record.finished:
        return (record.rev, selected)
    elapsed = record.elapsed_ms(now_ms) or 0.0
    return (record.rev, selected, format_ms(elapsed), elapsed > slow_after_ms)


def card_strips(
    console: Console,
    record: ToolCallRecord,
    label: str,
    width: int,
    *,
    selected: bool,
    now_ms: float,
    slow_after_ms: float,
    base: Style,
    selected_style: Style,
    margin: int = 0,
) -> list[Strip]:
    """The card's two lines, `width` cells wide, the card itself `margin` cells in from
    each side."""
    style = base + selected_style if selected else base
    bar = Text(BAR, style=_bar_style(record, selected))
    head = Text()
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
    elapsed = record.elapsed_ms(now_ms)
    if elapsed is not None:
        slow = not record.finished and elapsed > slow_after_ms
        badge.append(" ")
        badge.append(f"{format_ms(elapsed):>6}", style="bold yellow reverse" if slow else "dim")
    return [
        row_strip(console, width, bar, head, badge, style, base, margin),
        row_strip(console, width, bar, second_line(record), None, style, base, margin),
    ]


def row_strip(
    console: Console, width: int, bar: Text, body: Text, right: Text | None,
    style: Style, base: Style, margin: int = 0,
) -> Strip:
    """One line `width` cells wide: the bar, `body` cut with an ellipsis, `right` flush
    right, in `style`; `margin` cells of `base` on each side. (`body` is cut in place.)"""
    inner = width - 2 * margin
    right_width = right.cell_len + 1 if right is not None else 0
    body.truncate(max(0, inner - bar.cell_len - right_width), overflow="ellipsis", pad=True)
    line = Text(style=style, end="")
    line.append_text(bar)
    line.append_text(body)
    if right is not None:
        line.append(" ")
        line.append_text(right)
    line.truncate(inner, pad=True)
    segments = list(line.render(console))
    if margin:
        pad = Segment(" " * margin, base)
        segments = [pad, *segments, pad]
    return Strip(segments, width)


def _bar_style(record: ToolCallRecord, selected: bool) -> str:
    if selected:
        return "bold #ffa62b"
    return {
        "invalid": "red", "error": "red", "denied": "magenta", "aborted": "#ff8700",
        "running": "cyan", "after_hook": "cyan", "awaiting_approval": "magenta", "paused": "yellow",
        "done": "green",
    }.get(record.stage, "grey50")


def second_line(record: ToolCallRecord) -> Text:
    text = Text()
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
