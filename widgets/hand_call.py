"""Calling a tool by hand: pick any tool the agent has, fill its arguments, run it.

`ToolPickerModal` lists every tool with where it comes from (built in, your own file,
an MCP server); `HandCallModal` shows a form generated from the tool's JSON Schema
(`SchemaForm`, as the MCP dialogs use) or, with ctrl+j, the arguments as raw JSON
(`JsonEditModal`). Both are dismissed with the choice; the app runs the call through
`Agent.call_tool`, so the gate, breakpoints, cancel, the timeline, the inspector and
the session treat it as a model's call, marked as yours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from workbench.sanitize import literal
from workbench.widgets.footer import Footer
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.schema_form import SchemaForm
from workbench.widgets.terminal_safety import LiteralInput

if TYPE_CHECKING:
    from workbench.agent.tool import AgentTool

_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 90; max-width: 95%; height: auto; max-height: 90%;
    border: thick $accent; background: $surface; padding: 0 1;
}}
{name} .title {{ text-style: bold; margin: 0 0 1 0; }}
{name} .label {{ margin: 1 0 0 0; }}
{name} .error {{ color: $error; height: auto; }}
{name} SchemaForm {{ height: auto; max-height: 20; }}
{name} OptionList {{ height: auto; max-height: 20; }}
{name} Horizontal {{ height: auto; align-horizontal: right; margin: 1 0 0 0; }}
{name} Button {{ margin: 0 0 0 1; }}
"""


def origin(tool: AgentTool) -> str:
    """Where a tool comes from, in words."""
    source = tool.source or ""
    if source == "builtin":
        return "built in"
    if source.startswith("mcp:"):
        return f"MCP server {source[4:]}"
    return f"your own ({source})" if source else "your own"


class ToolPickerModal(ModalScreen[str | None]):
    """Every tool of the agent, narrowed by what is typed in the filter (each word must
    be in the tool's name, origin or description); dismissed with the picked tool's
    name, or None. Up and down move in the list; Enter picks."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
    ]
    DEFAULT_CSS = _CSS.format(name="ToolPickerModal")

    def __init__(self, tools: list[AgentTool]) -> None:
        super().__init__()
        self.tools = tools

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Call a tool by hand: pick the tool (enter)", classes="title")
            yield LiteralInput(placeholder="filter: words in the name or description", id="filter")
            yield OptionList(*self._options(""), id="tools")
        yield Footer()

    def _options(self, typed: str) -> list[Option]:
        words = typed.lower().split()
        options = []
        for i, tool in enumerate(self.tools):
            about = (tool.description or "").strip()
            haystack = f"{tool.name} {origin(tool)} {about}".lower()
            if not all(word in haystack for word in words):
                continue
            text = Text(literal(tool.name), style="bold")
            text.append(f"  {literal(origin(tool))}", style="cyan")
            if about:
                text.append(f"  {literal(about.splitlines()[0][:80])}", style="dim")
            options.append(Option(text, id=f"t-{i}"))
        return options

    def on_mount(self) -> None:
        self.query_one("#filter", Input).focus()
        self.query_one(OptionList).highlighted = 0 if self.tools else None

    @on(Input.Changed, "#filter")
    def _filtered(self, event: Input.Changed) -> None:
        listing = self.query_one(OptionList)
        listing.clear_options()
        listing.add_options(self._options(event.value))
        listing.highlighted = 0 if listing.option_count else None

    def action_move(self, step: int) -> None:
        listing = self.query_one(OptionList)
        if listing.option_count:
            now = listing.highlighted or 0
            listing.highlighted = max(0, min(listing.option_count - 1, now + step))

    @on(Input.Submitted, "#filter")
    def _submitted(self) -> None:
        listing = self.query_one(OptionList)
        if listing.highlighted is not None:
            self._pick(listing.get_option_at_index(listing.highlighted).id)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self._pick(event.option.id)

    def _pick(self, option_id: str | None) -> None:
        self.dismiss(self.tools[int(str(option_id)[2:])].name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HandCallModal(ModalScreen[dict[str, Any] | None]):
    """The arguments for one call of `tool`: a form from its schema, or raw JSON.
    Dismissed with the arguments to run it with, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+y", "run", "Run"),
        Binding("ctrl+j", "raw", "Raw JSON"),
        Binding("escape", "cancel", "Cancel"),
    ]
    DEFAULT_CSS = _CSS.format(name="HandCallModal")

    def __init__(self, tool: AgentTool) -> None:
        super().__init__()
        self.tool = tool
        self.schema = tool.json_schema

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text(f"Call {literal(self.tool.name)} by hand", style="bold")
            title.append(f"  {literal(origin(self.tool))}", style="cyan")
            yield Static(title, classes="title")
            yield Static(
                "It runs like a model's call (the gate asks as usual) and the model never "
                "sees it. Fields left empty are not sent; ctrl+j edits the arguments as JSON.",
                classes="hint",
            )
            yield SchemaForm(self.schema)
            yield Static("", id="hand-error", classes="error")
            with Horizontal():
                yield Button("Run (ctrl+y)", variant="success", id="run", compact=True)
                yield Button("Raw JSON (ctrl+j)", id="raw", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        inputs = self.query(Input)
        (inputs.first() if inputs else self.query_one("#run")).focus()

    @on(Button.Pressed, "#run, #raw, #cancel")
    async def _pressed(self, event: Button.Pressed) -> None:
        await self.run_action(str(event.button.id))

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        form = self.query_one(SchemaForm)
        values = form.values()
        problems = form.problems(values)
        if problems:
            self.query_one("#hand-error", Static).update(Text(literal("\n".join(problems))))
            return
        self.dismiss(values)

    def action_raw(self) -> None:
        """Edit the arguments as JSON (what the form holds so far); Apply runs them
        unchecked here: the call's own pipeline says what is wrong with them."""

        def applied(args: dict[str, Any] | None) -> None:
            if args is not None:
                self.dismiss(args)

        self.app.push_screen(
            JsonEditModal(
                f"Arguments for {self.tool.name} (Apply runs the call)",
                self.query_one(SchemaForm).values(),
                lambda _args: None,
            ),
            applied,
        )

    def action_cancel(self) -> None:
        self.dismiss(None)


class HandCallActions:
    """The app's side: the palette command opens the picker, then the form, then runs
    the call in a worker (refused while a run is going, as `Agent.call_tool` is)."""

    agent: Any
    follow_latest: bool

    def action_call_by_hand(self) -> None:
        app: Any = self
        if self.agent.state.is_streaming:
            app.notify(
                "A run is going: call a tool by hand once it has ended.",
                severity="warning",
                timeout=4,
            )
            return
        tools = list(self.agent.state.tools)
        if not tools:
            app.notify("This agent has no tools.", severity="warning", timeout=4)
            return

        def picked(name: str | None) -> None:
            tool = next((t for t in self.agent.state.tools if t.name == name), None)
            if tool is not None:
                app.push_screen(HandCallModal(tool), lambda args: self._filled(tool.name, args))

        app.push_screen(ToolPickerModal(tools), picked)

    def _filled(self, name: str, args: dict[str, Any] | None) -> None:
        if args is not None:
            self._call_by_hand(name, args)

    def _call_by_hand(self, name: str, args: dict[str, Any]) -> None:
        app: Any = self
        app.run_worker(self._run_by_hand(name, args), group="agent", exit_on_error=False)

    async def _run_by_hand(self, name: str, args: dict[str, Any]) -> None:
        app: Any = self
        self.follow_latest = True
        app.timeline.follow = True
        try:
            await self.agent.call_tool(name, args)
        except RuntimeError as exc:  # a run started meanwhile
            app.notify(str(exc), severity="warning", timeout=6, markup=False)
        app._refresh_now()
