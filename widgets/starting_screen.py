"""What an app shows while it starts: its frame, before what it will show exists.

The live app builds its runtime meanwhile (the agent, its tools, the gate, the
providers: most of its start-up; `WorkbenchApp._start_runtime`), and replay reads the
session file, saying how far it has read (`ReplayApp._read`); each swaps in its main
screen when done (`SlowStart`). Text typed or pasted meanwhile goes to the live app's message box;
other keys are dropped (a command typed before the screen that would show what it does
is not run blind later). It imports nothing of the workbench.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Header, Static


class StartingScreen(Screen[None]):
    """The app's title and what it is doing ("Starting…", "Reading…") until the main
    screen replaces it."""

    DEFAULT_CSS = """
    StartingScreen #starting { width: auto; color: $text-muted; }
    """

    def __init__(self, text: str = "Starting the workbench…") -> None:
        super().__init__()
        self.text = text
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
            yield Static(Text(self.text), id="starting")

    def say(self, text: str) -> None:
        """Show `text` (literal) instead: how far the start-up has come."""
        self.query_one("#starting", Static).update(Text(text))


Made = TypeVar("Made")


class SlowStart:
    """Mixed into an app whose first screen is a `StartingScreen`: what its main screen
    needs is made in a thread (the starting screen keeps answering ctrl+q and resizes),
    and what cannot be made ends the app with exit code 2, `start_error` saying why."""

    start_error: str | None = None
    """Why the app could not start (None: it did, or is still starting)."""
    START_FAILED: Any = None
    """The app's result when it could not start."""

    async def made_in_thread(
        self, make: Callable[..., Made], *args: Any, errors: tuple[type[Exception], ...]
    ) -> Made | None:
        """`make(*args)`, run in a thread; None once the app is ending because it raised
        one of `errors`."""
        try:
            return await asyncio.to_thread(make, *args)
        except errors as exc:
            self.cannot_start(str(exc))
            return None

    def cannot_start(self, why: str) -> None:
        """End the app with exit code 2; the command line says `why` once the terminal
        is back."""
        self.start_error = why
        app: Any = self
        app.exit(self.START_FAILED, return_code=2)
