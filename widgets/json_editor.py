"""JsonEditModal: edit a call's arguments as JSON, with highlighting and inline errors.

JSON syntax is checked as you type; on Apply the arguments go to `on_submit`,
which re-validates them against the tool's schema and raises `ValueError` with the
per-field problems if they are invalid. The dialog then stays open with the error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from workbench.json_text import escape_chars, loads
from workbench.sanitize import UNSAFE, literal
from workbench.widgets.footer import Footer


class JsonEditModal(ModalScreen[dict[str, Any] | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "apply", "Apply"),
        # Priority: the text area would otherwise take the first Escape (to let go of
        # the focus), and a later Tab would go into the JSON.
        Binding("escape", "cancel", "Back", priority=True),
        Binding("ctrl+home", "top", "Top", show=False),
        Binding("ctrl+end", "bottom", "End", show=False),
    ]

    DEFAULT_CSS = """
    JsonEditModal { align: center middle; }
    JsonEditModal > Vertical {
        width: 90; max-width: 95%; height: auto; max-height: 90%; border: thick $accent;
        background: $surface; padding: 0 1;
    }
    JsonEditModal .title { text-style: bold; margin: 0 0 1 0; }
    JsonEditModal TextArea { height: 14; }
    JsonEditModal #json-error { color: $error; height: auto; min-height: 1; }
    JsonEditModal Horizontal { height: auto; align-horizontal: right; }
    JsonEditModal Button { margin: 0 0 0 1; }
    """

    def __init__(
        self,
        title: str,
        args: dict[str, Any],
        on_submit: Callable[[dict[str, Any]], Any],
    ) -> None:
        super().__init__()
        self.title_text = title
        # characters a terminal would act on (or hide) as JSON escapes: the same value
        self.initial = escape_chars(json.dumps(args, indent=2, ensure_ascii=False), UNSAFE)
        self.on_submit = on_submit

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(literal(self.title_text)), classes="title")
            yield TextArea.code_editor(self.initial, language="json", id="json")
            yield Static("", id="json-error")
            with Horizontal():
                yield Button("Apply (ctrl+s)", variant="primary", id="apply", compact=True)
                yield Button("Back (esc)", id="cancel", compact=True)
        yield Footer()  # its own keys (the dialog's footer below said the dialog's)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @property
    def error_line(self) -> Static:
        return self.query_one("#json-error", Static)

    def parse(self) -> dict[str, Any] | None:
        """The editor's JSON object, or None with the problem shown."""
        source = self.query_one(TextArea).text
        try:
            value = loads(source)
        except json.JSONDecodeError as exc:
            self.error_line.update(Text(literal(json_error(exc))))
            return None
        except ValueError as exc:  # nested too deep
            self.error_line.update(Text(literal(str(exc))))
            return None
        if not isinstance(value, dict):
            self.error_line.update("The arguments must be a JSON object.")
            return None
        self.error_line.update("")
        return value

    @on(TextArea.Changed)
    def _changed(self) -> None:
        self.parse()

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        value = self.parse()
        if value is None:
            return
        try:
            self.on_submit(value)
        except ValueError as exc:
            self.error_line.update(Text(literal(str(exc))))
            return
        self.dismiss(value)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_top(self) -> None:
        self.query_one(TextArea).move_cursor((0, 0))

    def action_bottom(self) -> None:
        area = self.query_one(TextArea)
        area.move_cursor(area.document.end)


def json_error(exc: json.JSONDecodeError) -> str:
    """The whole problem, in words: the decoder's message ends in "at" and expects its
    position after it ("Invalid control character at")."""
    message = exc.msg.removesuffix(" at")
    if message == "Invalid control character":
        message += " (a tab or line break inside a string: write it as \\t or \\n)"
    return f"JSON error at line {exc.lineno}, column {exc.colno}: {message}"
