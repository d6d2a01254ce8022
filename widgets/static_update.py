"""Update a `Static` without laying out the screen when its height stays the same.

`Static.update` asks for a layout of the whole screen every time, in case the new
content is taller or shorter. On the workbench's screen a layout, and the full repaint
after it, costs 30 to 60 ms (measured), and the inspector updates a dozen statics each
time it shows a call, mostly with text of the same height as before (the newest call
of a burst, a ticking time, the next update of a live output).
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


def update(static: Static, content: VisualType) -> None:
    """Show `content` in `static`; lay out again only if its height changes."""
    width, height = static.size
    if not static.is_mounted or width <= 0:
        static.update(content)
        return
    static.update(content, layout=False)
    container = static.parent.size if static.parent is not None else static.size  # type: ignore[union-attr]
    if static.get_content_height(container, static.screen.size, width) != height:
        static.refresh(layout=True)
