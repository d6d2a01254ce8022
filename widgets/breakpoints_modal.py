"""BreakpointsModal: list, add and remove breakpoints of every kind the stepper knows."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from workbench.sanitize import literal
from workbench.stepper import Stepper, StepperError
from workbench.widgets.footer import Footer

HINT = (
    "A tool name (read_file, or a glob like *_file), an argument pattern "
    '(run_command(command="rm *"), write_file(path="src/**")), '
    "@invalid (arguments failed: any of @parse malformed JSON, @unknown no such tool, "
    "@prepare, @validate; F2 edits them there) or @error (any error result, before the "
    "model sees it; ctrl+o replaces it)."
)


class BreakpointsModal(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", key_display="esc"),
        Binding("delete", "remove", "Remove selected"),
    ]

    DEFAULT_CSS = """
    BreakpointsModal { align: center middle; }
    BreakpointsModal > Vertical {
        width: 84; max-width: 96%; height: auto; max-height: 90%; border: thick $accent;
        background: $surface; padding: 0 1;
    }
    BreakpointsModal .title { text-style: bold; }
    BreakpointsModal .hint { color: $text-muted; margin: 0 0 1 0; }
    BreakpointsModal OptionList { height: auto; max-height: 12; min-height: 3; }
    BreakpointsModal #bp-error { color: $error; height: auto; }
    BreakpointsModal Horizontal { height: auto; }
    BreakpointsModal Input { width: 1fr; }
    BreakpointsModal Button { margin: 0 0 0 1; }
    """

    def __init__(self, stepper: Stepper) -> None:
        super().__init__()
        self.stepper = stepper

    def compose(self) -> ComposeResult:
        yield Footer()
        with Vertical() as box:
            box.border_subtitle = "Enter adds · shift+Tab to the list, Delete removes · Esc closes"
            yield Static("Breakpoints", classes="title")
            yield Static(HINT, classes="hint")
            yield OptionList(id="bp-list")
            yield Static("", id="bp-error")
            with Horizontal():
                yield Input(
                    placeholder='e.g. edit_file, run_command(command="rm *"), @invalid', id="bp-new"
                )
                yield Button("Add", variant="primary", id="add", compact=True)
                yield Button("Remove", id="remove", compact=True)
                yield Button("Close", id="close", compact=True)

    def on_mount(self) -> None:
        self._fill()
        self.query_one("#bp-new", Input).focus()

    def _fill(self) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        for bp in self.stepper.breakpoints:
            options.add_option(Option(Text(literal(bp.text)), id=bp.text))
        if not self.stepper.breakpoints:
            options.add_option(Option(Text("no breakpoints", style="dim"), id="", disabled=True))

    @on(Input.Submitted, "#bp-new")
    @on(Button.Pressed, "#add")
    @work(exclusive=True, group="bp")
    async def _add(self) -> None:
        box = self.query_one("#bp-new", Input)
        text = box.value.strip()
        if not text:
            return
        try:
            await self.stepper.add_breakpoint(text)
        except StepperError as exc:
            self.query_one("#bp-error", Static).update(Text(literal(str(exc))))
            return
        self.query_one("#bp-error", Static).update("")
        box.value = ""
        self._fill()

    @on(Button.Pressed, "#remove")
    def _remove_pressed(self) -> None:
        self.action_remove()

    @work(exclusive=True, group="bp")
    async def action_remove(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return
        option = options.get_option_at_index(options.highlighted)
        if option.id:
            await self.stepper.remove_breakpoint(option.id)
            self._fill()

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)
