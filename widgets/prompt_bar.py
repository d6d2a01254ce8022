"""PromptBar: the message input, with the queue of messages waiting for a running agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Static

from workbench.sanitize import one_line
from workbench.widgets.terminal_safety import LiteralInput

QueueKind = Literal["steer", "follow_up"]


class PromptBar(Vertical):
    """Enter sends. While a run is going the message is queued as steering (delivered
    after the current tool batch) or as a follow-up (when the agent would stop)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+t", "toggle_queue_kind", "Steer/follow-up", show=False),
    ]

    DEFAULT_CSS = """
    PromptBar { height: auto; }
    PromptBar > #queue {
        height: auto; max-height: 4; color: $warning; padding: 0 1; display: none;
    }
    PromptBar > #queue.-shown { display: block; }
    PromptBar > #attachments {
        height: auto; max-height: 4; color: $accent; padding: 0 1; display: none;
    }
    PromptBar > #attachments.-shown { display: block; }
    PromptBar { border-top: hkey $panel-lighten-2; }
    PromptBar:focus-within { border-top: hkey $accent; }
    PromptBar > Input { padding: 0 1; }
    """

    queue_kind: reactive[QueueKind] = reactive("steer")
    """How a message typed during a run is queued."""
    running: reactive[bool] = reactive(False)
    """Whether a run is going (changes the placeholder)."""

    _queue_shown: tuple[list[str], list[str]] | None = None

    @dataclass
    class Submitted(Message):
        text: str
        queue_kind: QueueKind

    def compose(self):
        yield Static("", id="queue")
        yield Static("", id="attachments")
        yield LiteralInput(placeholder=self._placeholder(), id="prompt", compact=True)

    def _placeholder(self) -> str:
        if not self.running:
            return "Message the agent — Enter sends"
        kind = (
            "steering (after this tool batch)"
            if self.queue_kind == "steer"
            else "a follow-up (when it stops)"
        )
        return f"Running — Enter queues as {kind}; ctrl+t switches"

    def watch_queue_kind(self) -> None:
        self._refresh_placeholder()

    def watch_running(self) -> None:
        self._refresh_placeholder()

    def _refresh_placeholder(self) -> None:
        if self.is_mounted:
            self.query_one(Input).placeholder = self._placeholder()

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    def show_queue(self, steering: list[str], follow_ups: list[str]) -> None:
        if (steering, follow_ups) == self._queue_shown:
            return
        self._queue_shown = (list(steering), list(follow_ups))
        text = Text()
        for label, items in (("steer", steering), ("follow-up", follow_ups)):
            for item in items:
                if text:
                    text.append("\n")
                text.append(f"queued {label}: ", style="bold")
                text.append(one_line(item, 100))
        queue = self.query_one("#queue", Static)
        queue.update(text)
        queue.set_class(bool(text), "-shown")

    def show_attachments(self, headings: list[str]) -> None:
        """What goes with the next message (MCP resources and prompts), one line each."""
        text = Text()
        for heading in headings:
            if text:
                text.append("\n")
            text.append("attached: ", style="bold")
            text.append(one_line(heading, 100))
        if headings:
            text.append("  (F7, o, d drops them)", style="dim")
        attachments = self.query_one("#attachments", Static)
        attachments.update(text)
        attachments.set_class(bool(text), "-shown")

    @on(Input.Submitted, "#prompt")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        event.input.value = ""
        self.post_message(self.Submitted(text, self.queue_kind))

    def action_toggle_queue_kind(self) -> None:
        self.queue_kind = "follow_up" if self.queue_kind == "steer" else "steer"
        self.notify(
            f"Messages typed during a run are now queued as {self.queue_kind.replace('_', '-')}s."
        )
