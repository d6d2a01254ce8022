"""Scrolling for widgets drawn line by line (the timeline, the inspector).

Setting a `ScrollView`'s `virtual_size` lays out every widget on the screen (30 to
100 ms on the workbench's screen). A line-drawn widget's own size never depends on
its content, and its scrollbar is always there (`overflow-y: scroll`), so only the
bar itself needs to know: these helpers set the size without a layout, and hide the
empty track while everything fits (the `-fits` class; see `FITS_CSS`).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView

FITS_CSS = """
{name}.-fits {{
    scrollbar-background: $background;
    scrollbar-background-hover: $background;
    scrollbar-background-active: $background;
}}
"""
"""CSS hiding the empty track of widget type `name` while its content fits."""


def set_virtual_size(view: ScrollView, size: Size) -> None:
    """Set `view`'s scrollable size without laying out the screen."""
    if size != view.virtual_size:
        view.set_reactive(ScrollView.virtual_size, size)
        bar = view.vertical_scrollbar
        bar.window_virtual_size = size.height
        bar.window_size = view.scrollable_content_region.height
        bar.refresh()
        view.scroll_y = view.validate_scroll_y(view.scroll_y)


def hide_empty_track(view: ScrollView) -> None:
    """An empty track beside content that fits reads as a stray column: hide it.

    (A class change restyles the widget and its component classes, some 8 ms on the
    timeline, so callers skip it during a burst; the thumb shows either way.)
    """
    view.set_class(view.virtual_size.height <= view.scrollable_content_region.height, "-fits")
