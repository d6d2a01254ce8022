"""ClearCheckbox: a checkbox whose off state does not look like its on state.

Textual's compact checkbox draws `▐X▌` on and off alike (only the colours differ,
and some themes make them close), so this one draws `[x]` when on and `[ ]` when off.
It draws itself through the public `render` and `get_content_width`, not by replacing
the toggle's private button.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Checkbox


class ClearCheckbox(Checkbox):
    DEFAULT_CSS = """
    ClearCheckbox.-on > .toggle--label { text-style: bold; }
    """

    def _mark(self) -> str:
        return "[x] " if self.value else "[ ] "

    def render(self) -> Content:
        style = self.get_visual_style("toggle--label")
        return Content.assemble((self._mark(), style), self.label.pad(1, 1).stylize_before(style))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        label = self.label
        pad = 2 * self.styles.line_pad  # Textual pads the button and the label alike
        text = max((cell_len(line) for line in label.plain.split("\n")), default=0)
        return len(self._mark()) + pad + (2 if label else 0) + text + pad
