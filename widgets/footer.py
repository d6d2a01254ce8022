"""The footer: the keys that act where the focus is, as one line drawn by one widget.

Textual's footer is a row of widgets, one per key, which it removes and mounts again at
every change of focus or of what the keys can do: a layout of the screen, a dozen
widgets styled, and cycles of garbage for the collector, on every Tab. During a busy
run that was the costliest thing a key press set off (figures in benchmarks/README.md).
This footer looks and behaves the same (each key's own colours, disabled keys dimmed,
the palette key at the right edge, a compact style, a click presses the key, the wheel
scrolls keys that do not fit) and, when its keys change, draws one line again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.color import Color
from textual.css.styles import RenderStyles
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

SCROLL_STEP = 4
"""Cells the keys move sideways for one turn of the mouse wheel."""


@dataclass(frozen=True)
class FooterItem:
    """One key as the footer shows it."""

    key: str
    """What a click presses (the binding's key)."""
    display: str
    description: str
    action: str
    enabled: bool = True
    tooltip: str = ""
    palette: bool = False
    """The command palette's key, kept at the right edge."""


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    item: FooterItem


class Footer(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "footer--item",
        "footer--hover",
        "footer--key",
        "footer--description",
        "footer--disabled",
        "footer--palette-border",
    }
    DEFAULT_CSS = """
    Footer {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .footer--item { background: $footer-item-background; }
        & > .footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        & > .footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .footer--disabled { text-style: dim; }
        & > .footer--palette-border { color: $foreground 20%; }
    }
    """

    compact = reactive(False, toggle_class="-compact")
    """Less space around keys (the narrow layout)."""
    show_command_palette = reactive(True)
    """Show the command palette's key at the right edge."""

    def __init__(self, *, show_command_palette: bool = True, compact: bool = False) -> None:
        super().__init__()
        self.set_reactive(Footer.show_command_palette, show_command_palette)
        self.set_reactive(Footer.compact, compact)
        self.set_class(compact, "-compact", update=False)
        self.items: tuple[FooterItem, ...] = ()
        """The keys shown, left to right (the palette's last)."""
        self._offset = 0
        self._overflow = 0
        """How many cells of keys the last drawing had no room for (the wheel's range)."""
        self._hover: FooterItem | None = None
        self._spans: list[_Span] = []
        self._line: tuple[tuple[Any, ...], Strip] | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Any) -> None:
        if not self.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        items = self.keys_of(screen)
        if items != self.items:
            self.items = items
            self._set_hover(None)  # (its tooltip may be of a key that is gone)
            self.refresh()

    def keys_of(self, screen: Any) -> tuple[FooterItem, ...]:
        """What the footer shows for `screen`'s active bindings: one key per action, the
        first bound, in the order the focus chain gives them."""
        app = self.app
        active = screen.active_bindings
        items: dict[str, FooterItem] = {}
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in items:
                items[binding.action] = FooterItem(
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    enabled,
                    tooltip,
                )
        shown = list(items.values())
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            palette = active.get(app.COMMAND_PALETTE_BINDING)
            if palette is not None:
                _node, binding, enabled, _tooltip = palette
                shown.append(
                    FooterItem(
                        binding.key,
                        app.get_key_display(binding),
                        binding.description,
                        binding.action,
                        enabled,
                        binding.tooltip or binding.description,
                        palette=True,
                    )
                )
        return tuple(shown)

    def watch_compact(self) -> None:
        self.refresh()

    def watch_show_command_palette(self) -> None:
        if self.is_attached:
            self._bindings_changed(self.screen)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._line = None

    # -- drawing -----------------------------------------------------------------------

    def _styles(self) -> dict[str, Style]:
        """The rich style of each part, layered as Textual layers a widget in its parent."""
        _, background = self.background_colors
        color = self.styles.color

        def layer(under: Color, fg: Color, styles: RenderStyles) -> tuple[Color, Color]:
            bg = under + styles.background if styles.has_rule("background") else under
            return bg, (styles.color if styles.has_rule("color") else fg)

        def style(bg: Color, fg: Color, *extra: RenderStyles) -> Style:
            rich = Style.from_color((bg + fg).rich_color, bg.rich_color)
            for styles in extra:
                rich += styles.text_style
            return rich

        part = self.get_component_styles
        key, description, disabled = (
            part("footer--key"),
            part("footer--description"),
            part("footer--disabled"),
        )
        styles: dict[str, Style] = {"footer": style(background, color)}
        for name in ("item", "hover"):
            bg, fg = layer(background, color, part(f"footer--{name}"))
            styles[name] = style(bg, fg)
            styles[f"{name} key"] = style(*layer(bg, fg, key), key)
            styles[f"{name} description"] = style(*layer(bg, fg, description), description)
        styles["dim"] = Style() + disabled.text_style
        border = part("footer--palette-border")
        bg, _ = layer(background, color, part("footer--item"))
        styles["border"] = style(bg, border.color)
        return styles

    def _item_segments(self, item: FooterItem, styles: dict[str, Style]) -> list[Segment]:
        """The item as Textual's footer draws it: the key, then the description."""
        state = "hover" if item == self._hover else "item"
        dim = styles["dim"] if not item.enabled else Style()
        compact = self.compact or item.palette  # Textual draws the palette's key compact
        pad = "" if compact else " "
        segments = [Segment(f"{pad}{item.display}{pad}", styles[f"{state} key"] + dim)]
        if item.description:
            text = f" {item.description}" if compact else f"{item.description} "
            segments.append(Segment(text, styles[f"{state} description"] + dim))
        if item.palette and not self.compact:
            segments.append(Segment(" ", styles[state] + dim))
        return segments

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        styles = self._styles()
        key = (self.items, self.compact, width, self._hover, self._offset, styles)
        if self._line is None or self._line[0] != key:
            self._line = (key, self._draw(width, styles))
        return self._line[1] if y == 0 else Strip.blank(width, styles["footer"])

    def _draw(self, width: int, styles: dict[str, Style]) -> Strip:
        footer = styles["footer"]
        keys: list[Segment] = []
        spans: list[_Span] = []
        x = 0
        palette: FooterItem | None = None
        for item in self.items:
            if item.palette:
                palette = item
                continue
            segments = self._item_segments(item, styles)
            length = Segment.get_line_length(segments)
            spans.append(_Span(x, x + length, item))
            keys += segments
            x += length
            if self.compact:
                keys.append(Segment(" ", footer))
                x += 1
        right: list[Segment] = []
        if palette is not None:
            right = [Segment("▏", styles["border"]), *self._item_segments(palette, styles)]
        right_width = min(Segment.get_line_length(right), width)
        room = width - right_width
        self._overflow = max(0, x - room)
        self._offset = min(self._offset, self._overflow)
        offset = self._offset
        self._spans = [
            _Span(span.start - offset, span.end - offset, span.item)
            for span in spans
            if span.end > offset and span.start < offset + room
        ]
        if palette is not None:
            self._spans.append(_Span(room + 1, width, palette))
        line = Strip(keys).crop(offset, offset + room).extend_cell_length(room, footer)
        return Strip.join([line, Strip(right).crop(0, right_width)])

    # -- mouse -------------------------------------------------------------------------

    def item_at(self, x: int) -> FooterItem | None:
        """The key drawn at column `x`, if any."""
        for span in self._spans:
            if span.start <= x < span.end:
                return span.item
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._set_hover(self.item_at(event.x))

    def on_leave(self, _event: events.Leave) -> None:
        self._set_hover(None)

    def _set_hover(self, item: FooterItem | None) -> None:
        if item != self._hover:
            self._hover = item
            self.tooltip = (item.tooltip or None) if item is not None else None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        item = self.item_at(event.x)
        if item is None:
            return
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._scroll(SCROLL_STEP, event)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._scroll(-SCROLL_STEP, event)

    def _scroll(self, cells: int, event: events.Event) -> None:
        offset = max(0, min(self._offset + cells, self._overflow))
        if offset != self._offset:
            self._offset = offset
            event.stop()
            self.refresh()
