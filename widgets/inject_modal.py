"""InjectResultModal: answer a paused tool call with a result you write, instead of running
it, or replace the error result a call stopped at (`@error`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from workbench.sanitize import literal
from workbench.widgets.clear_checkbox import ClearCheckbox


class InjectResultModal(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "apply", "Send result"),
        Binding("escape", "cancel", "Back", priority=True),
    ]

    DEFAULT_CSS = """
    InjectResultModal { align: center middle; }
    InjectResultModal > Vertical {
        width: 80; max-width: 95%; height: auto; border: thick $warning; background: $surface;
        padding: 0 1;
    }
    InjectResultModal .title { text-style: bold; margin: 0 0 1 0; }
    InjectResultModal TextArea { height: 10; }
    InjectResultModal #inject-error { color: $error; height: auto; }
    InjectResultModal Horizontal { height: auto; align-horizontal: right; }
    InjectResultModal Button { margin: 0 0 0 1; }
    """

    def __init__(
        self, tool_name: str, on_submit: Callable[[str, bool], Any], *, replacing: bool = False
    ) -> None:
        super().__init__()
        self.tool_name = tool_name
        self.on_submit = on_submit
        self.replacing = replacing
        """At an `@error` stop: the text replaces the error result the call ended with."""

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Replace the error result of " if self.replacing else "Answer ")
            title.append(literal(self.tool_name), style="bold")
            if self.replacing:
                title.append(": the model gets this text instead of the error.")
            else:
                title.append(
                    " yourself: the tool will not run; the model gets this text as its result."
                )
            yield Static(title, classes="title")
            yield TextArea(id="result-text")
            yield ClearCheckbox("Mark the result as an error (is_error)", id="is-error")
            yield Static("", id="inject-error")
            with Horizontal():
                yield Button("Send result (ctrl+s)", variant="warning", id="apply", compact=True)
                yield Button("Back (esc)", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        text = self.query_one(TextArea).text
        try:
            self.on_submit(text, self.query_one(ClearCheckbox).value)
        except ValueError as exc:
            self.query_one("#inject-error", Static).update(Text(literal(str(exc))))
            return
        self.dismiss(text)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
