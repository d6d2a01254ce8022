"""Timeline: the conversation in order, assistant text as Markdown, tool calls as cards.

One widget draws the whole timeline line by line (Textual's Line API), so a run with a
thousand calls costs the screen no more layout than an empty one. Each item of
`ViewState.items` becomes a list of parts (a heading, a Markdown text, a card...),
each drawn into strips once and kept until what it depends on changes: the item's or
the call's `rev`, the selection, the width, a running call's ticking time
(`workbench.widgets.timeline_parts`). Cards are drawn only when they scroll into view. A text's
height is only known once drawn, so a text off screen gets an estimate
(`workbench.widgets.timeline_settle`). Mouse and keys: `workbench.widgets.timeline_input`.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from workbench.view.fold import ViewState
from workbench.view.records import TimelineItem
from workbench.widgets.heights import Heights
from workbench.widgets.line_scroll import LineScrollView
from workbench.widgets.timeline_input import TimelineInput
from workbench.widgets.timeline_parts import (
    ItemView,
    Painter,
    Part,
    Target,
    estimate_lines,
    load_markdown,
    place,
)
from workbench.widgets.timeline_settle import EstimateSettling
from workbench.widgets.tool_card import CARD_HEIGHT, SLOW_AFTER_MS, card_key, card_strips

EMPTY_TEXT = "Nothing yet. Type a message below and press Enter."


class Timeline(TimelineInput, EstimateSettling, LineScrollView, can_focus=True):
    """All timeline items; `sync(state, now)` redraws what changed. Posts `Selected`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Previous call", show=False),
        Binding("down,j", "move(1)", "Next call", show=False),
        Binding("enter", "select", "Inspect", show=False),
        Binding("t", "toggle_thinking", "Thinking", show=False),
        Binding("T", "toggle_one_thinking", "This reply's thinking", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--user",
        "timeline--user-bar",
        "timeline--head",
        "timeline--head-hover",
        "timeline--thinking",
        "timeline--notice",
        "timeline--notice-warning",
        "timeline--notice-error",
        "timeline--failure",
        "timeline--aborted",
        "timeline--empty",
        "timeline--selected",
    }

    DEFAULT_CSS = """
    Timeline > .timeline--user { background: $primary 12%; }
    Timeline > .timeline--user-bar { color: $primary; background: $primary 12%; }
    Timeline > .timeline--head { color: $success; text-style: bold; }
    Timeline > .timeline--head-hover { color: $success; text-style: bold underline; }
    Timeline > .timeline--thinking { color: $text-muted; }
    Timeline > .timeline--notice { color: $text-muted; text-style: italic; }
    Timeline > .timeline--notice-warning { color: $warning; text-style: italic; }
    Timeline > .timeline--notice-error { color: $error; text-style: italic; }
    Timeline > .timeline--failure { color: $error; }
    Timeline > .timeline--aborted { color: $warning; }
    Timeline > .timeline--empty { color: $text-muted; }
    Timeline > .timeline--selected { background: $primary 22%; }
    """

    @dataclass
    class Selected(Message):
        """The user picked a call (click, or ↑/↓ and Enter)."""

        tool_call_id: str

    def __init__(
        self,
        labels: dict[str, str],
        state: ViewState,
        clock: Callable[[], float],
        **kwargs: object,
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.labels = labels
        self.state = state
        self.clock = clock
        """What "now" is for elapsed times (the wall clock live, the event time in replay)."""
        self.slow_after_ms = SLOW_AFTER_MS
        """When a running call's time turns into a warning."""
        self.empty_text = EMPTY_TEXT
        self.selected_id: str | None = None
        self.follow = True
        """Keep the newest item in view (until the user scrolls up or picks a call)."""
        self._views: list[ItemView] = []
        self._heights = Heights()
        """Each view's height, and where it starts (see `workbench.widgets.heights`)."""
        self._card_at: dict[str, tuple[int, int]] = {}
        """A call's card: (its view's index, its first line in the view)."""
        self._unsettled: list[int] = []
        """A heap of minus the index of each view with estimated parts (newest first)."""
        self._parked: deque[ItemView] = deque()
        """Views a replay jump back cut off, in order: taken back as the items at their
        indexes return (what a view drew holds while the item's `rev` is the same)."""
        self._width = 0
        self._now = 0.0
        self._hover: Target | None = None
        self._all_thinking = False
        """Thinking blocks are open unless toggled (`t` opened them all)."""
        self._expanded: set[tuple[int, int]] = set()
        """(item, block) of each thinking block toggled one by one (see `_is_open`)."""
        self._redraw: set[int] = set()
        """Indexes of views the next `sync` must look at (a thinking block toggled)."""
        self._styles: dict[str, Style] = {}
        self._estimated = 0
        """How many parts (at most) still have an estimated height."""
        self._busy = False
        self._settling = False
        self._marks: tuple = ()
        """What every item's drawing depends on, as of the last `sync`."""
        self._synced_selected: str | None = None
        self._synced_state: ViewState | None = None
        self._open: set[int] = set()
        """Indexes of the views `sync` looks at when nothing says to look at all: new
        ones, and those of the turn in progress or with a call not finished."""
        self._look_at_all = True
        """Every view's drawing is forgotten (a new width, new styles)."""

    # -- data ------------------------------------------------------------------------

    def on_mount(self) -> None:  # beside `LineScrollView.on_mount` (Textual runs both)
        load_markdown()

    def sync(self, state: ViewState, now: float, *, busy: bool = False) -> None:
        """Bring the timeline up to `state`, redrawing only the parts that changed.

        Texts off screen get an estimated height; they are drawn when they scroll into
        view, or a few milliseconds' worth at a time while the app is not `busy`.
        """
        self._busy = busy
        self.state = state
        self._now = now
        width = self.scrollable_content_region.width - 1  # one column of right padding
        if width != self._width:
            self._width = width
            for view in self._views:
                view.signature = None
            self._look_at_all = True
        if width <= 0:
            return
        items = state.items
        if len(self._views) > len(items):  # a replay jump back folds into fewer items
            self._cut(len(items))
        for item in items[len(self._views) :]:
            self._add_view(item)
        changed = False
        marks = (self._hover, self.slow_after_ms)
        selected = (self._synced_selected, self.selected_id)
        every = (
            self._look_at_all
            or state is not self._synced_state
            or marks != self._marks
            or state.reached_back
        )
        self._marks, self._synced_selected, self._synced_state = marks, self.selected_id, state
        touched = {self._card_at.get(i, (-1,))[0] for i in selected if i is not None}
        touched |= self._redraw
        self._redraw, self._look_at_all = set(), False
        turn = state.turn
        views, still_open = self._views, set()
        # A refresh costs the views that can change, not the whole timeline.
        indexes = (
            range(len(views))
            if every
            else sorted(i for i in self._open | touched if 0 <= i < len(views))
        )
        for index in indexes:
            view, item = views[index], items[index]
            if (  # drawn from finished calls of an earlier turn: only these can change it
                view.final
                and not every
                and view.item is item
                and view.rev == item.rev
                and view.signature is not None
                and index not in touched
                and item.turn < turn
            ):
                continue
            view.item = item  # the same item at the same `rev` draws the same
            signature = self._signature(index, item)
            view.final = self._final(item)
            if signature != view.signature:
                view.signature = signature
                self._build(index, view)
                changed = True
            if not (view.final and item.turn < turn):
                still_open.add(index)
        self._open = still_open
        if changed or not self._views:
            self._relayout()
        self._settle_visible()
        if not busy:
            self.hide_empty_track()
            if self._estimated:
                self._settle_some()  # a few ms now, the rest in later frames

    def on_resize(self) -> None:
        if self.is_mounted:
            self.sync(self.state, self._now, busy=self._busy)  # redrawn at the new width
            self._relayout()  # a new height: still at the end if following, the bar if needed

    def reset(self, state: ViewState) -> None:
        """Forget every item: `state` is another session's.

        Within one session an item is known by its index in `state.items` and its
        `rev` (the fold bumps it on every change), so `sync` takes a new state object
        of the same session (replay moving back) and keeps what it drew; another
        session's items would match by index and `rev` alone, so they need this."""
        self.state = state
        self._views.clear()
        self._heights.truncate(0)
        self._card_at.clear()
        self._unsettled.clear()
        self._parked.clear()
        self._estimated = 0
        self._expanded.clear()
        self._all_thinking = False
        self._redraw.clear()
        self._open.clear()
        self._relayout()

    def _cut(self, count: int) -> None:
        """Keep the first `count` views; park the rest in case their items come back."""
        cut = self._views[count:]
        for view in cut:
            for call_id in view.item.tool_call_ids:
                self._card_at.pop(call_id, None)
        del self._views[count:]
        self._open = {i for i in self._open if i < count}
        self._heights.truncate(count)
        self._parked.extendleft(reversed(cut))

    def _add_view(self, item: TimelineItem) -> None:
        parked = self._parked
        if parked:  # the item at this index, drawn before the jump back (maybe at another rev)
            view = parked.popleft()
            view.item = item
        else:
            view = ItemView(item)
        index = len(self._views)
        self._open.add(index)
        self._views.append(view)
        self._heights.append(view.height)
        self._placed(index, view)

    def batches(self) -> list[list[str]]:
        """The call ids of every assistant message that has calls, in timeline order."""
        return [ids for view in self._views if (ids := view.item.tool_call_ids)]

    def synced(self) -> list[tuple[TimelineItem, int]]:
        """Each item shown, with the `rev` it was drawn at."""
        return [(view.item, view.rev) for view in self._views]

    def line_of(self, tool_call_id: str) -> int | None:
        """The first line of a call's card (in timeline lines, from the top)."""
        card = self._card_at.get(tool_call_id)
        return None if card is None else self._heights.start(card[0]) + card[1]

    def plain_lines(self) -> list[str]:
        """Every line as plain text (for tests and for copying)."""
        self.settle_all()
        return [self._strip(y).text for y in range(self.virtual_size.height)]

    # -- parts -----------------------------------------------------------------------

    def _signature(self, index: int, item: TimelineItem) -> Hashable:
        if item.kind != "assistant":
            return item.rev
        calls = self.state.calls
        cards = tuple(
            card_key(calls[i], i == self.selected_id, self._now, self.slow_after_ms)
            for i in item.tool_call_ids
            if i in calls
        )
        hover = self._hover == ("turn", item.turn)
        expanded = tuple(
            b
            for b, block in enumerate(item.blocks)
            if block.kind == "thinking" and self._is_open(index, b)
        )
        return (item.rev, cards, hover, expanded)

    def _final(self, item: TimelineItem) -> bool:
        """Whether the item's drawing can change only with its `rev`, the selection, the
        hover, the thinking blocks shown or the width: it is not streaming and each of
        its calls has finished (the fold sets `reached_back` when a later event changes
        an earlier turn's call)."""
        if item.streaming:
            return False
        calls = self.state.calls
        return all(i in calls and calls[i].finished for i in item.tool_call_ids)

    def _build(self, index: int, view: ItemView) -> None:
        item = view.item
        old = {part.key: part for part in view.parts}
        parts: list[Part] = []

        def add(
            key: Hashable,
            draw: Callable[[], list[Strip]],
            *,
            height: int | None = None,
            target: Target | None = None,
            estimate: int | None = None,
        ) -> None:
            part = old.get(key)
            if part is None:
                if estimate is not None:
                    part = Part(key, estimate, draw, target, estimated=True)
                    self._estimated += 1
                else:
                    part = Part(key, height or 0, draw, target)
                    if height is None:  # the height is only known once drawn
                        part.height = part.keep(draw())
            parts.append(part)

        add(("blank",), lambda: [], height=1)  # a line between items
        width = self._width
        paint = Painter(self.app.console, width, self._style)
        if item.kind == "user":
            add(("user", item.rev, width), lambda: paint.user(item))
        elif item.kind == "notice":
            add(("notice", item.rev, width), lambda: paint.notice(item))
        else:
            if item.by_hand:  # not the model's: no turn to open
                head = Text("you · a tool called by hand (the model does not see it)")
                style = self._style("timeline--head")
                add(("hand", width), lambda: paint.text(head, style, (0, 1)), height=1)
            else:
                hover = self._hover == ("turn", item.turn)
                head = Text(f"assistant · turn {item.turn}")
                style = self._style("timeline--head-hover" if hover else "timeline--head")
                add(
                    ("head", item.turn, hover, width),
                    lambda: paint.text(head, style, (0, 1)),
                    height=1,
                    target=("turn", item.turn),
                )
            for block_index, block in enumerate(item.blocks):
                if block.kind == "text":
                    text = block.text
                    add(
                        ("md", text, width),
                        partial(paint.markdown, text),
                        estimate=estimate_lines(text, width - 3),
                    )
                elif block.kind == "thinking":
                    expanded = self._is_open(index, block_index)
                    text = block.text
                    add(  # the title, and the text if open: drawn when seen, as texts are
                        ("thinking", text, expanded, item.streaming, width),
                        partial(paint.thinking, text, expanded, item.streaming),
                        estimate=1 + (estimate_lines(text, width - 4) if expanded else 0),
                        target=("thinking", (index, block_index)),
                    )
            self._cards(item, add)
            if item.stop_reason in ("error", "aborted"):
                add(("failure", item.stop_reason, item.error, width), lambda: paint.failure(item))
        view.parts, view.rev = tuple(parts), item.rev
        place(view)
        self._placed(index, view)

    def _placed(self, index: int, view: ItemView) -> None:
        """The view's parts are placed: note its height, its cards, and whether it has
        estimated parts to draw later."""
        self._heights.set(index, view.height)
        for part, start in zip(view.parts, view.starts, strict=True):
            if part.target is not None and part.target[0] == "call":
                self._card_at[part.target[1]] = (index, start)  # type: ignore[index]
            if part.estimated:
                heapq.heappush(self._unsettled, -index)

    def _cards(self, item: TimelineItem, add: Callable[..., None]) -> None:
        calls = self.state.calls
        records = [calls[i] for i in item.tool_call_ids if i in calls]
        if not records:
            return
        add(("blank",), lambda: [], height=1)  # a line between the text and the calls
        width = self._width
        base, selected_style = self._style(""), self._style("timeline--selected")
        console = self.app.console
        for record in records:
            selected = record.id == self.selected_id
            key = (
                "card",
                record.id,
                card_key(record, selected, self._now, self.slow_after_ms),
                width,
            )

            def draw(record=record, selected=selected, now=self._now) -> list[Strip]:
                return card_strips(
                    console,
                    record,
                    self.labels.get(record.name, record.name),
                    width,
                    selected=selected,
                    now_ms=now,
                    slow_after_ms=self.slow_after_ms,
                    base=base,
                    selected_style=selected_style,
                    margin=1,
                )

            add(key, draw, height=CARD_HEIGHT, target=("call", record.id))

    # -- drawing ---------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            base = self.rich_style
            style = self._styles[name] = (
                base + self.get_component_rich_style(name) if name else base
            )
        return style

    def restyle(self) -> None:
        self._styles.clear()
        for view in self._views:
            view.signature, view.parts = None, ()
        self._look_at_all = True
        if self._width > 0:
            self.sync(self.state, self._now)

    def _relayout(self) -> None:
        height = self._heights.total + 1 if self._views else 2  # a blank line at the end
        self.set_virtual_size(Size(max(self._width, 0), height))
        if not self._busy:  # the track's restyle waits for the burst to end
            self.hide_empty_track()
        self.follow_newest()
        self.refresh()

    def _locate(self, y: int) -> tuple[Part, int] | None:
        index = self._heights.find(y)
        if not 0 <= index < len(self._views):
            return None
        view = self._views[index]
        within = y - self._heights.start(index)
        if within >= view.height:
            return None
        at = bisect_right(view.starts, within) - 1
        return view.parts[at], within - view.starts[at]

    def _strip(self, y: int) -> Strip:
        width = max(self._width, 0)
        base = self._style("")
        if not self._views:
            if y == 1 and width > 4:
                text = Text(self.empty_text, no_wrap=True, overflow="ellipsis")
                paint = Painter(self.app.console, width, self._style)
                return paint.text(text, self._style("timeline--empty"), (0, 2))[0]
            return Strip.blank(width, base)
        found = self._locate(y)
        if found is None:
            return Strip.blank(width, base)
        part, line = found
        strip = part.line(line)
        return strip if strip is not None else Strip.blank(width, base)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strip = self._strip(int(self.scroll_y) + y)
        if strip.cell_length == width:
            return strip
        return strip.extend_cell_length(width, self._style("")).crop(0, width)
