"""McpInputModal: an mcp.json entry's `${input:ID}`, asked once before its server starts.

Shows the input's id and description (literally) and a field for its value, hidden
while typed when the entry marks it `"password": true`. Enter gives it, Escape gives
nothing (the server then fails to start, saying so; F7, `r` asks again).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from workbench.mcp.variables import McpInput
from workbench.sanitize import literal
from workbench.widgets.footer import Footer
from workbench.widgets.terminal_safety import LiteralInput


class McpInputModal(ModalScreen[str | None]):
    """Asks for input `spec` of server `server`; dismissed with its value or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    DEFAULT_CSS = """
    McpInputModal { align: center middle; }
    McpInputModal > Vertical {
        width: 80; max-width: 95%; height: auto; border: thick $warning;
        background: $surface; padding: 0 1;
    }
    McpInputModal .title { text-style: bold; margin: 0 0 1 0; }
    McpInputModal Input { margin: 1 0 0 0; }
    McpInputModal Horizontal { height: auto; align-horizontal: right; margin: 1 0 0 0; }
    McpInputModal Button { margin: 0 0 0 1; }
    """

    def __init__(self, server: str, spec: McpInput) -> None:
        super().__init__()
        self.server = server
        self.spec = spec

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text(f"MCP server {literal(self.server)} needs ${{input:{literal(self.spec.id)}}}"),
                classes="title",
            )
            if self.spec.description:
                yield Static(Text(literal(self.spec.description)))
            yield Static(
                Text(
                    f"Asked once for this run (the session does not keep it; "
                    f"{self.spec.env_name} gives it without asking).",
                    style="dim",
                )
            )
            yield LiteralInput(password=self.spec.password, id="input-value")
            with Horizontal():
                yield Button("Give it (enter)", variant="success", id="give", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#input-value", Input).focus()

    @on(Input.Submitted, "#input-value")
    @on(Button.Pressed, "#give")
    def action_give(self) -> None:
        self.dismiss(self.query_one("#input-value", Input).value)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class InputAsker:
    """Asks the app's person for inputs (one dialog at a time), for `InputBook.ask`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, server: str, spec: McpInput) -> str | None:
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def settle(result: str | None) -> None:
            if not answer.done():
                answer.set_result(result)

        self.app.push_screen(McpInputModal(server, spec), settle)
        return await answer
