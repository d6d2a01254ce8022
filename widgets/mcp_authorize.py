"""McpAuthorizeModal: an HTTP MCP server wants a person to sign in (OAuth).

Shows the authorization URL (literally) for the person to open: `o` opens it in the
browser (only an http or https address), `c` copies it, Escape closes the dialog while
the server goes on waiting (F7 still shows the address). The dialog closes by itself
once the authorization server has sent the browser back to the workbench.
"""

from __future__ import annotations

import asyncio
import webbrowser
from typing import ClassVar
from urllib.parse import urlsplit

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.sanitize import literal
from workbench.widgets.footer import Footer


def openable(url: str) -> bool:
    """Only a web address goes to the browser (not `file:`, `javascript:` and the like)."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


class McpAuthorizeModal(ModalScreen[None]):
    """Server `server` waits for a person to open `url` and sign in."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open", "Open in browser"),
        Binding("c", "copy", "Copy address"),
        Binding("escape", "dismiss", "Close"),
    ]

    DEFAULT_CSS = """
    McpAuthorizeModal { align: center middle; }
    McpAuthorizeModal > Vertical {
        width: 90; max-width: 95%; height: auto; max-height: 90%; border: thick $warning;
        background: $surface; padding: 0 1;
    }
    McpAuthorizeModal .title { text-style: bold; margin: 0 0 1 0; }
    McpAuthorizeModal #authorize-url { margin: 1 0; }
    McpAuthorizeModal #authorize-said { color: $text-muted; height: auto; }
    McpAuthorizeModal Horizontal { height: auto; align-horizontal: right; margin: 1 0 0 0; }
    McpAuthorizeModal Button { margin: 0 0 0 1; }
    """

    def __init__(self, server: str, url: str) -> None:
        super().__init__()
        self.server = server
        self.url = url

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text(f"MCP server {literal(self.server)} wants you to sign in (OAuth)"),
                classes="title",
            )
            yield Static(
                Text(
                    "Open this address in a browser and authorize the workbench; the "
                    "authorization server then sends the browser back to the workbench "
                    "(on 127.0.0.1), and the server starts."
                )
            )
            yield Static(Text(literal(self.url), style="bold underline"), id="authorize-url")
            yield Static("", id="authorize-said")
            with Horizontal():
                yield Button("Open in browser (o)", variant="primary", id="open", compact=True)
                yield Button("Copy address (c)", id="copy", compact=True)
                yield Button("Close (esc)", id="dismiss", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#open", Button).focus()

    @on(Button.Pressed, "#open, #copy, #dismiss")
    async def _pressed(self, event: Button.Pressed) -> None:
        await self.run_action(str(event.button.id))

    def _say(self, text: str) -> None:
        self.query_one("#authorize-said", Static).update(Text(text))

    async def action_open(self) -> None:
        if not openable(self.url):
            self._say("Not a web address: copy it (c) and look at it before opening it.")
            return
        opened = await asyncio.to_thread(webbrowser.open, self.url)
        self._say(
            "Opened in your browser; waiting for the authorization server."
            if opened
            else "No browser could be started here: copy the address (c) and open it."
        )

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.url)
        self._say("Address copied.")
