"""What the timeline is drawn from: parts, item views, and how each kind of item is drawn.

A part is one piece of an item (a heading, a Markdown text, a thinking block, a tool
call's card, a failure line) with the lines it draws, cached under a key that
says what it depends on. `Painter` draws every kind but cards (`workbench.widgets.tool_card`).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from rich.console import Console, RenderableType
from rich.padding import Padding, PaddingDimensions
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from workbench.sanitize import literal
from workbench.view.records import TimelineItem


def load_markdown() -> None:
    """Import Rich's Markdown and its parser in a thread, once: the first frame does
    without them, and the first text of a run would otherwise wait for the import
    (longer than a key may wait; benchmarks/README.md)."""
    if "rich.markdown" not in sys.modules:
        threading.Thread(target=importlib.import_module, args=("rich.markdown",)).start()


Target = tuple[str, Hashable]
"""What a click on a line does: ("call", id), ("turn", n) or ("thinking", (item, block))."""


@dataclass(eq=False)
class Part:
    key: Hashable
    height: int
    draw: Callable[[], list[Strip]] | None
    """Draws the strips when first shown (None once drawn)."""
    target: Target | None = None
    estimated: bool = False
    """`height` is a guess until drawn (text off screen: drawing it is the costly part)."""
    lines: tuple[tuple[Segment, ...], ...] | None = None
    """What was drawn, one tuple of segments a line. Not the strips themselves: a
    `Strip` holds seven caches, eight more objects a line for the garbage collector to
    walk for as long as the session runs; a strip is made again for each line painted."""
    lengths: tuple[int, ...] = ()
    """Each line's width in cells."""

    def keep(self, strips: list[Strip]) -> int:
        """Keep what `draw` drew; returns how many lines it is."""
        self.draw = None
        self.lines = tuple(tuple(strip) for strip in strips)
        self.lengths = tuple(strip.cell_length for strip in strips)
        return len(strips)

    def settle(self) -> int:
        """Draw an estimated part; returns how much its height changed."""
        if not self.estimated:
            return 0
        height = self.height
        if self.lines is None:
            assert self.draw is not None
            height = self.keep(self.draw())
        self.estimated = False
        change, self.height = height - self.height, height
        return change

    def line(self, index: int) -> Strip | None:
        if self.lines is None:
            assert self.draw is not None
            self.keep(self.draw())
        lines = self.lines
        assert lines is not None
        return Strip(lines[index], self.lengths[index]) if index < len(lines) else None


@dataclass(eq=False)
class ItemView:
    item: TimelineItem
    signature: Hashable = None
    parts: tuple[Part, ...] = ()
    starts: tuple[int, ...] = ()
    height: int = 0
    rev: int = -1
    """The item's `rev` when last drawn."""
    final: bool = False
    """Its drawing changes only with what `Timeline.sync` checks before skipping it."""


def place(view: ItemView) -> None:
    """Where each of the item's parts starts, and the item's height."""
    starts, line = [], 0
    for part in view.parts:
        starts.append(line)
        line += part.height
    view.starts, view.height = tuple(starts), line


def estimate_lines(text: str, width: int) -> int:
    """About how many lines `text` takes as Markdown `width` cells wide (no drawing)."""
    if not text.strip():
        return 0
    width = max(width, 1)
    return sum(max(1, -(-len(line) // width)) for line in text.strip().split("\n"))


class Painter:
    """Draws parts `width` cells wide; `style(name)` is the timeline's style for a
    component class ("" for the timeline's own)."""

    def __init__(self, console: Console, width: int, style: Callable[[str], Style]) -> None:
        self.console, self.width, self.style = console, width, style

    def render(
        self, renderable: RenderableType, style: Style, width: int | None = None
    ) -> list[Strip]:
        width = self.width if width is None else width
        console = self.console
        options = console.options.update(width=width, height=None, highlight=False, markup=False)
        lines = console.render_lines(renderable, options, style=style, pad=True)
        return [Strip(line, width) for line in lines]

    def text(self, text: Text, style: Style, pad: PaddingDimensions) -> list[Strip]:
        return self.render(Padding(text, pad, style=style), style)

    def user(self, item: TimelineItem) -> list[Strip]:
        text = Text("you (steering)  " if item.steering else "you  ", style="bold")
        text.append(literal(item.text))
        style = self.style("timeline--user")
        bar = Segment("▌", self.style("timeline--user-bar"))
        strips = self.render(Padding(text, (0, 1), style=style), style, self.width - 1)
        return [Strip([bar, *strip], self.width) for strip in strips]

    def notice(self, item: TimelineItem) -> list[Strip]:
        name = {"warning": "timeline--notice-warning", "error": "timeline--notice-error"}.get(
            item.level, "timeline--notice"
        )
        return self.text(Text(literal(item.text)), self.style(name), (0, 1))

    def markdown(self, text: str) -> list[Strip]:
        if not text.strip():
            return []
        # Imported here, not at start-up: the first frame has no text (`load_markdown`).
        from rich.markdown import Markdown

        markdown = Markdown(literal(text), code_theme="monokai", hyperlinks=False)
        return self.render(Padding(markdown, (0, 1, 0, 2)), self.style(""))

    def thinking(self, text: str, expanded: bool, streaming: bool) -> list[Strip]:
        title = Text(("▼ " if expanded else "▶ ") + ("thinking…" if streaming else "thinking"))
        strips = self.text(title, self.style(""), (0, 1))
        if expanded:
            body = Text(literal(text), style="italic")
            strips += self.text(body, self.style("timeline--thinking"), (0, 1, 0, 3))
        return strips

    def failure(self, item: TimelineItem) -> list[Strip]:
        error = literal(item.error or "")
        if item.stop_reason == "aborted":
            return self.text(Text("■ aborted: " + error), self.style("timeline--aborted"), (0, 1))
        return self.text(Text("✗ model error: " + error), self.style("timeline--failure"), (0, 1))
