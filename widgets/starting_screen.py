"""What the app shows while it starts: its frame, before the runtime exists.

Building the runtime (the agent, its tools, the gate, the providers) is most of the
start-up, so the app draws this first and swaps in the main screen once the runtime is
built (`WorkbenchApp._start_runtime`). Text typed or pasted meanwhile goes to the main
screen's message box; other keys are dropped (a command typed before the screen that
would show what it does is not run blind later). It imports nothing beyond Textual.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Header, Static


class StartingScreen(Screen[None]):
    """The app's title and "Starting…" until the main screen replaces it."""

    DEFAULT_CSS = """
    StartingScreen #starting { width: auto; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.typed: list[str] = []
        """The characters typed or pasted so far (backspace takes the last back), for the
        main screen's message box."""

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character:
            self.typed.append(event.character)
        elif event.key == "backspace" and self.typed:
            self.typed.pop()

    def on_paste(self, event: events.Paste) -> None:
        if event.text:  # one line, as the message box takes a paste
            self.typed.extend(event.text.splitlines()[0])

    def compose(self) -> ComposeResult:
        yield Header()
        with Middle(), Center():
            yield Static("Starting the workbench…", id="starting")
