"""The workbench's two layouts: side by side, and, below `WIDE` cells, stacked.

Textual's horizontal breakpoints put `-narrow` (or `-wide`) on the screen whenever
the terminal is resized; `app.tcss` stacks the timeline over the inspector for
`-narrow`, and `follow_width` keeps the footer compact to match.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

from workbench.widgets.footer import Footer

WIDE = 110
BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]
"""For the apps' `HORIZONTAL_BREAKPOINTS`."""


def follow_width(app: Any, screen: Screen[Any]) -> None:
    """Keep `screen`'s footer compact while the screen is narrow (checked after every
    layout, which a resize always brings)."""

    def fit(_screen: Screen[Any]) -> None:
        footer = screen.query_one(Footer)
        narrow = screen.has_class("-narrow")
        if footer.compact != narrow:
            footer.compact = narrow

    screen.screen_layout_refresh_signal.subscribe(app, fit)
    fit(screen)
