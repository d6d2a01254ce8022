"""ClearCheckbox: a checkbox whose off state does not look like its on state.

Textual's compact checkbox draws `▐X▌` on and off alike (only the colours differ,
and some themes make them close), so this one draws `[x]` when on and `[ ]` when off.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox


class ClearCheckbox(Checkbox):
    DEFAULT_CSS = """
    ClearCheckbox.-on > .toggle--label { text-style: bold; }
    """

    @property
    def _button(self) -> Content:
        style = self.get_visual_style("toggle--label")
        return Content.assemble(("[x] " if self.value else "[ ] ", style))
