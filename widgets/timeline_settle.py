"""Drawing the timeline's estimated parts: a text off screen has an estimated height
until it is drawn, when it scrolls into view or, a few milliseconds' worth at a time,
while the app is calm. What is on screen stays in place when an estimate is corrected.

A mixin of `workbench.widgets.timeline.Timeline`.
"""

from __future__ import annotations

import heapq
import time
from typing import Any

from workbench.widgets.heights import Heights
from workbench.widgets.timeline_parts import ItemView, place


class EstimateSettling:
    """`settle_all` and the settling of estimated parts in view and while calm."""

    _views: list[ItemView]
    _heights: Heights
    _unsettled: list[int]
    _estimated: int
    _busy: bool
    _settling: bool
    follow: bool
    scroll_y: float
    scrollable_content_region: Any
    scroll_to: Any
    set_timer: Any
    _placed: Any
    _relayout: Any

    def _settle_visible(self) -> None:
        """Draw the estimated parts on screen (and, unless busy, a screenful around, so
        paging is smooth), then lay out again."""
        if not self._estimated or not self._views:
            return
        for _ in range(4):  # drawn heights move what is on screen: look again
            height = max(self.scrollable_content_region.height, 1)
            top = int(self.scroll_y)
            around = 0 if self._busy else height
            changed = False
            for index in self._rows_between(top - around, top + height + around):
                if self._settle_view(index):
                    changed = True
            if not changed:
                return
            self._relayout()

    def _rows_between(self, first: int, last: int) -> range:
        """The indexes of the views holding lines `first`..`last`."""
        heights = self._heights
        start = max(heights.find(max(first, 0)), 0)
        return range(start, min(heights.find(last) + 1, len(self._views)))

    def _settle_view(self, index: int) -> bool:
        """Draw the view's estimated parts; True if its height changed."""
        view = self._views[index]
        change = 0
        for part in view.parts:
            if part.estimated:
                self._estimated -= 1
                change += abs(part.settle())
        if change:
            place(view)
            self._placed(index, view)
        return change != 0

    def settle_all(self) -> None:
        """Draw every estimated part now (tests, and copying the whole timeline)."""
        if self._estimated:
            for index in range(len(self._views)):
                self._settle_view(index)
            self._estimated = 0
            self._unsettled.clear()
            self._relayout()

    def _settle_later(self) -> None:
        if not self._settling:
            self._settling = True
            self.set_timer(0.05, self._settle_some)

    def _settle_some(self, budget: float = 0.004) -> None:
        """Draw estimated parts for up to `budget` seconds, newest first, keeping what is
        on screen in place; again later while some are left and the app is not busy."""
        self._settling = False
        if self._busy or not self._estimated:
            return
        deadline = time.perf_counter() + budget
        top = int(self.scroll_y)
        shift = 0
        views, heap = self._views, self._unsettled
        while heap and time.perf_counter() <= deadline:
            index = -heapq.heappop(heap)
            if index >= len(views) or not any(p.estimated for p in views[index].parts):
                continue  # cut off, or settled since
            height = views[index].height
            above = self._heights.start(index) + height <= top
            if self._settle_view(index) and above:
                shift += views[index].height - height  # keep what is on screen in place
        if not heap:
            self._estimated = 0
        self._relayout()
        if shift and not self.follow:
            self.scroll_to(y=top + shift, animate=False, immediate=True)
        if self._estimated:
            self._settle_later()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)  # type: ignore[misc]
        if self._estimated and round(old) != round(new):
            self._settle_visible()
