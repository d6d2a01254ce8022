"""The one path from untrusted text to the terminal, for both apps.

Widgets build what they show with `workbench.sanitize.literal`, inside Rich `Text` or
Textual `Content` (never markup). The strings Textual itself puts on screen go
through here, so no call site has to remember:

- `SafeTextApp`, a base of both apps: the header's title and sub-title (the app's and
  every screen's) and every notification are made literal (notifications never
  parse markup), and `TerminalGuard` is installed;
- `LiteralInput`: a text box whose value is made literal, so a pre-filled prompt
  (a scenario's, or a fork's first message) shows what will be sent, escapes
  included, and sends exactly that;
- `TerminalGuard`: a Textual line filter over every line of every widget, the last
  check before the terminal. A character `literal` would have replaced that still
  reaches it (a path this module does not know) is replaced there, keeping the
  line's width, and counted in `slipped`, which the tests require to stay 0.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from rich.segment import Segment
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.notifications import SeverityLevel
from textual.widgets import Input

from workbench.sanitize import UNSAFE, literal, safe

log = logging.getLogger("workbench.widgets")


class TerminalGuard(LineFilter):
    """Replaces unsafe characters in rendered segments (and in link targets)."""

    def __init__(self) -> None:
        super().__init__()
        self.slipped = 0
        """Segments that reached the terminal with an unsafe character (0 when every
        path made its text literal)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if safe("".join([text for text, _, _ in segments])) and all(
            style is None or not style.link or safe(style.link) for _, style, _ in segments
        ):
            return segments
        return [self._clean(segment) for segment in segments]

    def _clean(self, segment: Segment) -> Segment:
        text, style, control = segment
        if control is not None:
            return segment
        link = style is not None and style.link and UNSAFE.search(style.link)
        if not UNSAFE.search(text) and not link:
            return segment
        self.slipped += 1
        log.warning("unsafe text reached the screen unescaped: %r", text[:80])
        if link and style is not None:
            style = style.update_link(None)
        if UNSAFE.search(text):
            # The characters are zero-width (a surrogate is one cell): the stand-ins
            # are cut back to the cells the layout gave the segment.
            width = Segment(text).cell_length
            shown = literal(text)
            cut = Segment(shown, style).split_cells(width)[0] if width else Segment("", style)
            return Segment(cut.text + " " * (width - cut.cell_length), style)
        return Segment(text, style)


class SafeTextApp:
    """Mixed into the workbench's apps (before `App`): titles and notifications are
    shown literally, and every line passes the guard."""

    terminal_guard: TerminalGuard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.terminal_guard = TerminalGuard()
        super().__init__(*args, **kwargs)

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), self.terminal_guard]  # type: ignore[misc]

    def validate_title(self, title: Any) -> str:
        return literal(str(title))

    def validate_sub_title(self, sub_title: Any) -> str:
        return literal(str(sub_title))

    def format_title(self, title: str, sub_title: str) -> Content:
        """Screens' titles too (a screen may set its own)."""
        return super().format_title(literal(title), literal(sub_title))  # type: ignore[misc]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification is plain literal text: `markup` is ignored (none of ours
        uses it, and a message may quote what a model or file said)."""
        super().notify(  # type: ignore[misc]
            literal(message),
            title=literal(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )


class LiteralInput(Input):
    """An Input whose value is always literal (what it shows is what it sends)."""

    def validate_value(self, value: str) -> str:
        return literal(value)
