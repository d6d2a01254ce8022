"""Scrubber: where replay stands in a recorded session, and how far through it is.

Two lines: "event N / M · type · turn k · what the event is about · time since the
first event", then a bar filled up to the position with a tick at every turn start,
so the shape of the session is visible while stepping through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widget import Widget

from workbench.sanitize import one_line
from workbench.widgets.render import format_ms


def describe(event: Any) -> str:
    """A few words on what an event is about (untrusted parts made literal)."""
    kind = event.type
    name = getattr(event, "tool_name", None)
    call = getattr(event, "tool_call_id", None)
    if kind == "message_update":
        ame = event.assistant_message_event
        return f"{ame.type} #{ame.content_index}"
    if kind in ("message_start", "message_end"):
        message = event.message
        extra = (
            f" ({message.stop_reason})"
            if message.role == "assistant" and kind == "message_end"
            else ""
        )
        return f"{message.role}{extra}"
    if kind == "permission_decision":
        return f"{event.decision} {one_line(name or '', 30)} by {event.decided_by}"
    if kind == "tool_execution_end":
        return f"{one_line(name or '', 30)} {'error' if event.is_error else 'ok'}"
    if kind == "tool_arguments" and event.failed_stage:
        return f"{one_line(name or '', 30)} {event.failed_stage} failed"
    if name and call:
        return f"{one_line(name, 30)} {one_line(call, 30)}"
    if kind == "step_paused":
        return str(event.point)
    return ""


class Scrubber(Widget):
    """Shows the replay position; `show(...)` updates it."""

    DEFAULT_CSS = """
    Scrubber { height: 2; background: $panel; padding: 0 1; }
    """

    def __init__(self, total: int, turn_marks: Sequence[int] = (), **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.total = total
        self.turn_marks = list(turn_marks)
        """Positions of the turn starts (ticks on the bar)."""
        self.position = 0
        self.event: Any = None
        self.turn = 0
        self.elapsed_ms = 0.0

    def show(self, position: int, event: Any, turn: int, elapsed_ms: float) -> None:
        self.position, self.event, self.turn, self.elapsed_ms = position, event, turn, elapsed_ms
        self.refresh()

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"event {self.position} / {self.total}", style="bold")
        if self.event is not None:
            text.append(" · ", style="dim")
            text.append(self.event.type, style="bold cyan")
            about = describe(self.event)
            if about:
                text.append(" " + about)
            text.append(" · ", style="dim")
            text.append(f"turn {self.turn}")
            text.append(" · ", style="dim")
            text.append(f"+{format_ms(self.elapsed_ms)}", style="dim")
        else:
            text.append(" · before the first event", style="dim")
        text.append("\n")
        text.append_text(self._bar(max(10, self.size.width - 2)))
        return text

    def _bar(self, width: int) -> Text:
        total = max(1, self.total)
        filled = round(width * self.position / total)
        cells = ["━" if i < filled else "─" for i in range(width)]
        for mark in self.turn_marks:
            i = min(width - 1, (mark - 1) * width // total)
            cells[i] = "┿" if i < filled else "┼"
        bar = Text(no_wrap=True)
        bar.append("".join(cells[:filled]), style="bold cyan")
        bar.append("".join(cells[filled:]), style="dim")
        return bar
