"""Tool-call cards: two lines a call, drawn straight into strips.

The first line has the tool's label, its arguments, a status badge and its time; the
second the first line of its result, its live output or what it waits for. A card is
a few runs of text, each with a Rich style definition, cut and padded to the width
and turned into segments directly: no Rich `Text`, tables or layout, which would cost
several times as much a card. The timeline caches a card
until the call, the selection or the ticking time changes.
"""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from workbench.sanitize import literal, one_line
from workbench.view.records import ToolCallRecord
from workbench.widgets.render import (
    WAIT_SHOWN_MS,
    compact_json,
    format_ms,
    format_times,
    status_label,
)

CARD_HEIGHT = 2
BAR = "▌"
SLOW_AFTER_MS = 10_000.0
"""A running call's working time (waits not counted) turns into a warning after this long."""

Run = tuple[str, tuple[str, ...]]
"""Some text and the Rich style definitions it is drawn in, applied in order on top of
the row's style (none: the row's style)."""


def card_key(record: ToolCallRecord, selected: bool, now_ms: float, slow_after_ms: float) -> tuple:
    """Everything a card's drawing depends on besides the width."""
    if record.started_at is None or record.finished:
        return (record.rev, selected)
    times = record.times(now_ms)
    return (
        record.rev,
        selected,
        format_times(times),
        times is not None and times[0] > slow_after_ms,
    )


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
    bar: Run = (BAR, (_bar_style(record, selected),))
    head: list[Run] = [(literal(label) + " ", ("bold",))]
    if label != record.name:
        head.append((literal(record.name) + " ", ("dim",)))
    head.append((" ", ()))
    if record.by_hand:
        head.append(("called by you ", ("bold yellow",)))
    if record.edited_args is not None:  # what ran; the model's own are in the inspector
        head.append(("✎ edited by you ", ("bold yellow",)))
    args = record.ran_args
    if args:
        head.append((compact_json(args, 200), ("italic",)))
    elif record.raw:
        head.append((one_line(record.raw, 200), ("italic",)))
    status, status_style = status_label(record.status)
    badge: list[Run] = [(status, (status_style,))]
    if record.injected:
        badge.append((" injected by you", (status_style, "bold yellow")))
    times = record.times(now_ms)
    if times is not None:  # working time; the slow warning counts it alone
        slow = not record.finished and times[0] > slow_after_ms
        badge.append((" ", (status_style,)))
        warning = "bold yellow reverse" if slow else "dim"
        badge.append((f"{format_ms(times[0]):>6}", (status_style, warning)))
        if times[1] >= WAIT_SHOWN_MS:
            badge.append((f" +{format_ms(times[1])} wait", (status_style, "dim italic")))
    return [
        row_strip(console, width, bar, head, badge, style, base, margin),
        row_strip(console, width, bar, second_line(record), [], style, base, margin),
    ]


def row_strip(
    console: Console,
    width: int,
    bar: Run,
    body: list[Run],
    right: list[Run],
    style: Style,
    base: Style,
    margin: int = 0,
) -> Strip:
    """One line `width` cells wide: the bar, `body` cut with an ellipsis, `right` flush
    right, in `style`; `margin` cells of `base` on each side."""
    inner = width - 2 * margin
    right_width = sum(cell_len(text) for text, _ in right) + 1 if right else 0
    room = max(0, inner - cell_len(bar[0]) - right_width)
    line = _Line(console, style)
    line.add(bar)
    used = sum(cell_len(text) for text, _ in body)
    if used > room:  # cut as Rich's "ellipsis" overflow cuts: "…" in the cut run's style
        keep = room - 1
        cut: tuple[str, ...] = ()
        for text, styles in body:
            size = cell_len(text)
            if size > keep:
                if keep > 0:
                    line.add((set_cell_size(text, keep), styles))
                cut = styles
                break
            line.add((text, styles))
            keep -= size
        line.add(("…", cut))
    else:
        for run in body:
            line.add(run)
        line.add((" " * (room - used), ()))
    if right:
        line.add((" ", ()))
        for run in right:
            line.add(run)
    segments = line.segments
    if line.cells != inner:
        segments = Segment.adjust_line_length(segments, inner, style)
    if margin:
        pad = Segment(" " * margin, base)
        segments = [pad, *segments, pad]
    return Strip(segments, width)


class _Line:
    """Segments being built: runs in the same style join into one segment."""

    def __init__(self, console: Console, style: Style) -> None:
        self.console, self.style = console, style
        self.segments: list[Segment] = []
        self.cells = 0

    def add(self, run: Run) -> None:
        text, styles = run
        if not text:
            return
        style = _combined(self.console, self.style, styles)
        segments = self.segments
        if segments and style == segments[-1].style:
            segments[-1] = Segment(segments[-1].text + text, style)
        else:
            segments.append(Segment(text, style))
        self.cells += cell_len(text)


@lru_cache(maxsize=1024)
def _combined(console: Console, style: Style, names: tuple[str, ...]) -> Style:
    """`style` with each of the definitions `names` on top, in order."""
    for name in names:
        style = style + console.get_style(name)
    return style


def _bar_style(record: ToolCallRecord, selected: bool) -> str:
    if selected:
        return "bold #ffa62b"
    return {
        "invalid": "red",
        "error": "red",
        "denied": "magenta",
        "aborted": "#ff8700",
        "running": "cyan",
        "after_hook": "cyan",
        "awaiting_approval": "magenta",
        "paused": "yellow",
        "done": "green",
    }.get(record.status, "grey50")


def second_line(record: ToolCallRecord) -> list[Run]:
    """What the card's second line says: the result, the live output, or what it waits for."""
    if record.status == "invalid" and record.arg_error:
        return [("↳ " + one_line(record.arg_error, 200), ("red",))]
    if record.content is not None:
        result = record.result_text
        first = "↳ " + (one_line(result, 200) or "(no text)")
        runs: list[Run] = [(first, ("red" if record.is_error else "dim",))]
        lines = result.count("\n") + 1 if result.strip() else 0
        if lines > 1:
            runs.append((f"  ({lines} lines)", ("dim italic",)))
        return runs
    if record.output:
        last = record.output.rstrip().splitlines()[-1] if record.output.strip() else ""
        return [("… " + one_line(last, 200), ("cyan",))]
    if record.status == "awaiting_approval":
        return [("↳ waiting for your decision", ("magenta",))]
    if record.status == "paused":
        return [paused_line(record)]
    return []


def paused_line(record: ToolCallRecord) -> Run:
    """Where the call is stopped, as its card says it."""
    pause = record.pause
    point = pause.point if pause is not None else "before_tool"
    if point == "after_tool" and pause is not None and pause.result is not None:
        text = "".join(getattr(c, "text", "") for c in pause.result.content)
        return ("‖ stopped at its error result (not sent yet): " + one_line(text, 200), ("yellow",))
    if point == "invalid_arguments":
        return (
            "‖ stopped at its failed arguments: " + one_line(record.arg_error or "", 200),
            ("yellow",),
        )
    return ("↳ paused before it runs", ("yellow",))
