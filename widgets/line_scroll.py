"""`LineScrollView`: the base of the widgets drawn line by line (the timeline, the inspector).

Setting a `ScrollView`'s `virtual_size` lays out every widget on the screen, the
costliest thing a refresh can set off. A line-drawn widget's own size never depends on
its content, and its scrollbar is always there (`overflow-y: scroll`), so only the
bar itself needs to know: `set_virtual_size` sets the size without a layout, and
`hide_empty_track` hides the empty track while everything fits (`-fits`).

Such a widget keeps lines drawn in its colours, so it redraws them (`restyle`) when
a colour changes: on a style update, and once a new theme has reached its component
classes (they change only after `notify_style_update` has run).
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView


class LineScrollView(ScrollView):
    DEFAULT_CSS = """
    LineScrollView { overflow-y: scroll; overflow-x: hidden; }
    LineScrollView.-fits {
        scrollbar-background: $background;
        scrollbar-background-hover: $background;
        scrollbar-background-active: $background;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = set()
    _style_key: tuple[Style, ...] = ()

    def set_virtual_size(self, size: Size) -> None:
        """Set the scrollable size without laying out the screen."""
        if size != self.virtual_size:
            self.set_reactive(ScrollView.virtual_size, size)
            bar = self.vertical_scrollbar
            bar.window_virtual_size = size.height
            bar.window_size = self.scrollable_content_region.height
            bar.refresh()
            self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def hide_empty_track(self) -> None:
        """An empty track beside content that fits reads as a stray column: hide it.

        (A class change restyles the widget and its component classes, so the timeline
        skips it during a burst; the thumb shows either way.)
        """
        fits = self.virtual_size.height <= self.scrollable_content_region.height
        self.set_class(fits, "-fits")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(
            self, lambda _theme: self.call_after_refresh(self._check_colours)
        )

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._check_colours()

    def _check_colours(self) -> None:
        """`restyle` if a colour changed (hover and focus changes get here too)."""
        if not self.is_mounted:
            return
        names = sorted(self.COMPONENT_CLASSES)
        styles = (self.rich_style, *(self.get_component_rich_style(n) for n in names))
        if styles != self._style_key:
            self._style_key = styles
            self.restyle()

    def restyle(self) -> None:
        """Redraw every line in the current colours."""
