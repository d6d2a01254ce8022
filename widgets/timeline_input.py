"""What the timeline does with the mouse and the keys: pick a call (click, ↑/↓ and
Enter), open a turn's request (click its heading), open thinking blocks (click, t, T),
and follow the newest item until the user scrolls up.

A mixin of `widgets.timeline.Timeline` (its bindings name these actions).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.geometry import Region

from widgets.heights import Heights
from widgets.timeline_parts import ItemView, Target
from widgets.tool_card import CARD_HEIGHT


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
    _hover: Target | None
    _now: float
    scroll_y: float
    max_scroll_y: float
    post_message: Any
    scroll_end: Any
    scroll_to_region: Any
    sync: Any
    line_of: Any
    _locate: Any

    def _target(self, event: events.MouseEvent) -> Target | None:
        offset = event.get_content_offset(self)
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
            await self.app.run_action(f"run_details({value})")
        elif kind == "thinking":
            self._expanded.symmetric_difference_update({value})  # type: ignore[arg-type]
            self.sync(self.state, self._now)

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

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.follow = False

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
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
        ids = self._call_ids()
        if not ids:
            return
        if self.selected_id in ids:
            index = min(max(ids.index(self.selected_id) + step, 0), len(ids) - 1)
        else:
            index = 0 if step > 0 else len(ids) - 1
        self.post_message(self.Selected(ids[index]))
        self.show_call(ids[index])

    def _thinking_blocks(self) -> list[tuple[int, int]]:
        """(item, block) of every thinking block, in timeline order."""
        return [
            (index, block_index)
            for index, view in enumerate(self._views)
            for block_index, block in enumerate(view.item.blocks)
            if block.kind == "thinking"
        ]

    def action_toggle_thinking(self) -> None:
        """Open every thinking block, or close them all if any is open."""
        self._expanded = set() if self._expanded else set(self._thinking_blocks())
        self.sync(self.state, self._now)

    def action_toggle_one_thinking(self) -> None:
        """Open or close the thinking of the reply that holds the selected call (with
        no call selected, or none in a reply with thinking: the newest thinking block)."""
        blocks = self._thinking_blocks()
        if not blocks:
            self.app.notify("No thinking to show: the model has not sent any.", timeout=2)
            return
        chosen = blocks[-1]
        for index, view in enumerate(self._views):
            if self.selected_id in view.item.tool_call_ids:
                chosen = next((b for b in blocks if b[0] == index), chosen)
                break
        self._expanded.symmetric_difference_update({chosen})
        self.sync(self.state, self._now)
        if chosen in self._expanded and chosen[0] < len(self._views):
            self.follow = False
            start = self._heights.start(chosen[0])
            self.scroll_to_region(Region(0, start, 1, 3), animate=False, immediate=True)

    def _newest_call_id(self) -> str | None:
        """The last call shown (`_call_ids()[-1]`, from the end: a focus costs the same
        however long the timeline)."""
        for view in reversed(self._views):
            for i in reversed(view.item.tool_call_ids):
                if i in self._card_at:
                    return i
        return None

    def _call_ids(self) -> list[str]:
        return [i for view in self._views for i in view.item.tool_call_ids if i in self._card_at]

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
