"""What the app shows while it starts: its frame, before the runtime exists.

Building the runtime (the agent, its tools, the gate, the providers) is most of the
start-up, so the app draws this first and swaps in the main screen once the runtime is
built (`WorkbenchApp._start_runtime`). It imports nothing beyond Textual.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Header, Static


class StartingScreen(Screen[None]):
    """The app's title and "Starting…" until the main screen replaces it."""

    DEFAULT_CSS = """
    StartingScreen #starting { width: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        with Middle(), Center():
            yield Static("Starting the workbench…", id="starting")
