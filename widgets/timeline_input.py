"""What the timeline does with the mouse and the keys: pick a call (click, ↑/↓ and
Enter), open a turn's request (click its heading), open thinking blocks (click, t, T),
and follow the newest item until the user scrolls up.

A mixin of `workbench.widgets.timeline.Timeline` (its bindings name these actions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual import events
from textual.geometry import Region
from textual.widget import Widget

from workbench.widgets.heights import Heights
from workbench.widgets.timeline_parts import ItemView, Target
from workbench.widgets.tool_card import CARD_HEIGHT


class TimelineInput:
    """Mouse and key handling for `Timeline`."""

    Selected: Any
    state: Any
    selected_id: str | None
    follow: bool
    app: Any
    _views: list[ItemView]
    _heights: Heights
    _card_at: dict[str, tuple[int, int]]
    _expanded: set[tuple[int, int]]
    _all_thinking: bool
    _redraw: set[int]
    _hover: Target | None
    _now: float
    scroll_y: float
    post_message: Any
    scroll_end: Any
    scroll_to_region: Any
    sync: Any
    line_of: Any
    _locate: Any

    if TYPE_CHECKING:  # Widget's, which the timeline is

        @property
        def max_scroll_y(self) -> int: ...

    def _target(self, event: events.MouseEvent) -> Target | None:
        offset = event.get_content_offset(cast(Widget, self))
        if offset is None:
            return None
        found = self._locate(int(self.scroll_y) + offset.y)
        return found[0].target if found is not None else None

    async def on_click(self, event: events.Click) -> None:
        target = self._target(event)
        if target is None:
            return
        kind, value = target
        if kind == "call":
            self.post_message(self.Selected(str(value)))
        elif kind == "turn":
            await self.app.run_action(f"network_view({value})")
        elif kind == "thinking":
            self._toggle_block(value)  # type: ignore[arg-type]

    def on_mouse_move(self, event: events.MouseMove) -> None:
        target = self._target(event)
        hover = target if target is not None and target[0] == "turn" else None
        if hover != self._hover:
            self._hover = hover
            self.sync(self.state, self._now)

    def on_leave(self, _event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.sync(self.state, self._now)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.follow = False

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.follow = self.scroll_y >= self.max_scroll_y - 2

    def on_focus(self) -> None:
        if self.selected_id in self._card_at:
            self.post_message(self.Selected(self.selected_id))
            return
        newest = self._newest_call_id()
        if newest is not None:
            self.post_message(self.Selected(newest))

    def action_select(self) -> None:
        if self.selected_id is not None:
            self.post_message(self.Selected(self.selected_id))

    def action_move(self, step: int) -> None:
        target = self._call_after(self.selected_id, step)
        if target is not None:
            self.post_message(self.Selected(target))
            self.show_call(target)

    def _call_after(self, selected: str | None, step: int) -> str | None:
        """The call shown `step` (1 or -1) cards after `selected`: the same one at either
        end, the first or the newest if `selected` is not shown. Walks from the selected
        card, so a key costs the same however many calls the session holds."""
        at = self._card_at.get(selected) if selected is not None else None
        if at is None:
            return self._first_call_id() if step > 0 else self._newest_call_id()
        index = at[0]
        ids = self._views[index].item.tool_call_ids
        position = ids.index(selected) if selected in ids else (-1 if step > 0 else len(ids))
        while True:
            position += step
            while 0 <= position < len(ids):
                if ids[position] in self._card_at:
                    return ids[position]
                position += step
            index += step
            if not 0 <= index < len(self._views):
                return selected
            ids = self._views[index].item.tool_call_ids
            position = -1 if step > 0 else len(ids)

    def _is_open(self, index: int, block: int) -> bool:
        """Whether the item's thinking block shows its text."""
        return ((index, block) in self._expanded) != self._all_thinking

    def _toggle_block(self, block: tuple[int, int]) -> None:
        self._expanded.symmetric_difference_update({block})
        self._redraw.add(block[0])
        self.sync(self.state, self._now)

    def action_toggle_thinking(self) -> None:
        """Open every thinking block, or close them all if any is open."""
        self._all_thinking = not (self._all_thinking or self._expanded)
        self._expanded = set()
        self._redraw.update(  # only replies that thought change: cards are not looked at
            index
            for index, view in enumerate(self._views)
            if any(block.kind == "thinking" for block in view.item.blocks)
        )
        self.sync(self.state, self._now)

    def action_toggle_one_thinking(self) -> None:
        """Open or close the thinking of the reply that holds the selected call (with
        no call selected, or none in a reply with thinking: the newest thinking block)."""
        chosen = self._selected_thinking() or self._newest_thinking()
        if chosen is None:
            self.app.notify("No thinking to show: the model has not sent any.", timeout=2)
            return
        self._toggle_block(chosen)
        if self._is_open(*chosen) and chosen[0] < len(self._views):
            self.follow = False
            start = self._heights.start(chosen[0])
            self.scroll_to_region(Region(0, start, 1, 3), animate=False, immediate=True)

    def _selected_thinking(self) -> tuple[int, int] | None:
        """The first thinking block of the reply that holds the selected call."""
        at = self._card_at.get(self.selected_id) if self.selected_id is not None else None
        if at is None:
            return None
        blocks = self._views[at[0]].item.blocks
        found = next((b for b, block in enumerate(blocks) if block.kind == "thinking"), None)
        return None if found is None else (at[0], found)

    def _newest_thinking(self) -> tuple[int, int] | None:
        """The last thinking block in the timeline (walked from the end)."""
        for index in range(len(self._views) - 1, -1, -1):
            blocks = self._views[index].item.blocks
            for b in range(len(blocks) - 1, -1, -1):
                if blocks[b].kind == "thinking":
                    return index, b
        return None

    def _first_call_id(self) -> str | None:
        """The first call shown (walked from the start)."""
        for view in self._views:
            for i in view.item.tool_call_ids:
                if i in self._card_at:
                    return i
        return None

    def _newest_call_id(self) -> str | None:
        """The last call shown (walked from the end: a focus costs the same however long
        the timeline)."""
        for view in reversed(self._views):
            for i in reversed(view.item.tool_call_ids):
                if i in self._card_at:
                    return i
        return None

    def follow_newest(self) -> None:
        """Scroll to the end if following."""
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def show_call(self, tool_call_id: str) -> None:
        """Scroll so the call's card is visible (and stop following the newest item)."""
        line = self.line_of(tool_call_id)
        if line is not None:
            self.follow = False
            self.scroll_to_region(Region(0, line, 1, CARD_HEIGHT), animate=False, immediate=True)
