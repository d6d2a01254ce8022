"""McpCatalogScreen: one MCP server's resources, resource templates and prompts.

Opened from the MCP servers view (F7, `o`). Left, every resource, template and
prompt the server lists (and, opened from a tool call, the resources its result links
to or embeds); right, the highlighted one's description and, once fetched,
what the server sent. Enter reads a resource, or asks for a template's variables or a
prompt's arguments in a small form (`ArgumentsModal`, with the server's completions)
and then reads or gets it; `s` subscribes to a resource (each change is said, and the
one shown is read again). `a`
attaches what is shown to the next message you send (the app keeps the attachments
and shows them above the message box); `d` drops the attachments. Everything a server
sent is shown literally.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

import mcp_types
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from workbench.mcp.catalog import Reading, expand_template, template_variables
from workbench.mcp.failures import McpCallError
from workbench.sanitize import literal
from workbench.widgets.footer import Footer
from workbench.widgets.schema_form import CompleteFn, SchemaForm


class ArgumentsModal(ModalScreen[dict[str, str] | None]):
    """Text fields for a template's variables or a prompt's arguments: each is
    (name, description, required). Dismissed with the values given, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+y", "accept", "Send"),
        Binding("escape", "cancel", "Cancel"),
    ]

    DEFAULT_CSS = """
    ArgumentsModal { align: center middle; }
    ArgumentsModal > Vertical {
        width: 80; max-width: 95%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    ArgumentsModal .title { text-style: bold; margin: 0 0 1 0; }
    ArgumentsModal .label { margin: 1 0 0 0; }
    ArgumentsModal .error { color: $error; height: auto; }
    ArgumentsModal VerticalScroll { height: auto; max-height: 20; }
    ArgumentsModal Horizontal { height: auto; align-horizontal: right; margin: 1 0 0 0; }
    ArgumentsModal Button { margin: 0 0 0 1; }
    """

    def __init__(
        self,
        title: str,
        fields: list[tuple[str, str, bool]],
        complete: CompleteFn | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.complete = complete
        self.schema = {
            "type": "object",
            "properties": {
                name: {"type": "string", **({"description": about} if about else {})}
                for name, about, _ in fields
            },
            "required": [name for name, _, required in fields if required],
        }

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(literal(self.title_text)), classes="title")
            yield SchemaForm(self.schema, self.complete)
            yield Static("", id="args-suggested", classes="hint")
            yield Static("", id="args-error", classes="error")
            with Horizontal():
                yield Button("Send (ctrl+y)", variant="success", id="accept", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        inputs = self.query(Input)
        (inputs.first() if inputs else self.query_one("#accept")).focus()

    @on(Button.Pressed, "#accept, #cancel")
    async def _pressed(self, event: Button.Pressed) -> None:
        await self.run_action(str(event.button.id))

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_accept()

    @on(SchemaForm.Suggested)
    def _suggested(self, event: SchemaForm.Suggested) -> None:
        shown = ", ".join(event.values[:10]) + (" …" if len(event.values) > 10 else "")
        text = f"{event.name}: {shown} (→ takes the first)" if event.values else ""
        self.query_one("#args-suggested", Static).update(Text(literal(text), style="dim"))

    def action_accept(self) -> None:
        form = self.query_one(SchemaForm)
        values = form.values()
        problems = form.problems(values)
        if problems:
            self.query_one("#args-error", Static).update(Text(literal("\n".join(problems))))
            return
        self.dismiss({name: str(value) for name, value in values.items()})

    def action_cancel(self) -> None:
        self.dismiss(None)


def _option(kind: str, index: int, name: str, detail: str) -> Option:
    text = Text(f"{kind} ", style="dim")
    text.append(literal(name), style="bold")
    if detail:
        text.append(f"  {literal(detail)}", style="dim")
    return Option(text, id=f"{kind[0]}:{index}")


class McpCatalogScreen(ModalScreen[None]):
    """The resources, templates and prompts of `connection`; `attach` takes a reading
    for the next message and returns how many are attached now."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("a", "attach", "Attach to next message"),
        Binding("d", "drop", "Drop attachments"),
        Binding("s", "subscribe", "Subscribe"),
    ]

    DEFAULT_CSS = """
    McpCatalogScreen { align: center middle; }
    McpCatalogScreen > Horizontal {
        width: 95%; height: 85%; border: thick $accent; background: $surface;
    }
    McpCatalogScreen OptionList { width: 44; height: 1fr; border-right: solid $panel; }
    McpCatalogScreen VerticalScroll { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def __init__(
        self,
        connection: Any,
        attach: Callable[[Reading], int],
        drop: Callable[[], int],
        linked: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__()
        self.connection = connection
        self.linked = [
            mcp_types.Resource.model_validate({"name": str(r.get("uri")), **r})
            for r in linked or []
        ]
        """Resources a tool call's result named (listed first)."""
        self._attach_reading = attach
        self._drop_readings = drop
        self.reading: Reading | None = None
        """What the server last sent (a read resource or a got prompt)."""
        self._listed: tuple[Any, ...] = ()
        self.shown_uri: str | None = None
        """The resource whose reading is shown (re-read when it is said to change)."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="catalog-items")
            with VerticalScroll():
                yield Static(id="catalog-about")
                yield Static(id="catalog-reading")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_items()
        self.query_one(OptionList).focus()
        self.set_interval(1.0, self.refresh_items)
        self.connection.on_updated.append(self._updated)

    def on_unmount(self) -> None:
        if self._updated in self.connection.on_updated:
            self.connection.on_updated.remove(self._updated)

    def _updated(self, uri: str) -> None:
        """A subscribed resource changed: re-read it if it is the one shown."""
        count = self.connection.updates.get(uri, 0)
        self.notify(f"{uri} changed (update {count})", markup=False)
        if uri == self.shown_uri:
            self.fetch(lambda: self.connection.read_resource(uri))

    def action_subscribe(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is None:
            return
        kind, item = self._item(self.query_one(OptionList).get_option_at_index(index).id)
        if kind not in ("r", "l"):
            self.notify("Only a resource can be subscribed to.", severity="warning")
            return
        self._subscribe(str(item.uri))

    @work(group="mcp-subscribe", exit_on_error=False)
    async def _subscribe(self, uri: str) -> None:
        try:
            await self.connection.subscribe(uri)
        except McpCallError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.notify(f"Subscribed to {uri}: its changes show here", markup=False)

    def refresh_items(self) -> None:
        """List the catalog again if it changed (the server said its lists changed)."""
        catalog = self.connection.catalog
        listed = (tuple(catalog.resources), tuple(catalog.templates), tuple(catalog.prompts))
        if listed == self._listed:
            return
        self._listed = listed
        items = self.query_one(OptionList)
        items.clear_options()
        options: list[Option] = []
        for i, resource in enumerate(self.linked):
            options.append(_option("linked", i, str(resource.uri), "in the call's result"))
        for i, resource in enumerate(catalog.resources):
            options.append(
                _option("resource", i, resource.title or resource.name, str(resource.uri))
            )
        for i, template in enumerate(catalog.templates):
            options.append(
                _option("template", i, template.title or template.name, template.uri_template)
            )
        for i, prompt in enumerate(catalog.prompts):
            names = ", ".join(a.name for a in prompt.arguments or [])
            options.append(
                _option("prompt", i, prompt.title or prompt.name, f"({names})" if names else "")
            )
        items.add_options(options)
        if not options:
            self.query_one("#catalog-about", Static).update(self._nothing())
        elif items.highlighted is None:
            items.highlighted = 0

    def _nothing(self) -> Text:
        text = Text(
            f"MCP server {literal(self.connection.name)} lists no resources, templates or prompts.",
            style="dim",
        )
        for problem in self.connection.catalog.problems:
            text.append(f"\n{literal(problem)}", style="yellow")
        return text

    def _item(self, option_id: str | None) -> tuple[str, Any]:
        kind, _, index = (option_id or "").partition(":")
        catalog = self.connection.catalog
        items = {
            "r": catalog.resources,
            "t": catalog.templates,
            "p": catalog.prompts,
            "l": self.linked,
        }[kind]
        return kind, items[int(index)]

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        kind, item = self._item(event.option.id)
        text = Text()
        label = {
            "r": "Resource",
            "t": "Resource template",
            "p": "Prompt",
            "l": "Resource named in the call's result",
        }[kind]
        text.append(f"{label} {literal(item.name)}\n", style="bold")
        where = getattr(item, "uri", None) or getattr(item, "uri_template", None)
        if where is not None:
            text.append(f"{literal(str(where))}\n")
        if getattr(item, "mime_type", None):
            text.append(f"{literal(item.mime_type)}\n", style="dim")
        if item.description:
            text.append(f"{literal(item.description)}\n", style="italic")
        for argument in getattr(item, "arguments", None) or []:
            text.append(f"  {literal(argument.name)}", style="bold")
            text.append("" if argument.required else " (optional)", style="dim")
            text.append(f"  {literal(argument.description or '')}\n")
        action = {
            "r": "read it",
            "l": "read it",
            "t": "fill in its variables and read it",
            "p": "get it"
            if not getattr(item, "arguments", None)
            else "fill in its arguments and get it",
        }[kind]
        text.append(f"\nEnter: {action}.", style="dim")
        self.query_one("#catalog-about", Static).update(text)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        kind, item = self._item(event.option.id)
        if kind in ("r", "l"):
            self.shown_uri = str(item.uri)
            self.fetch(lambda: self.connection.read_resource(str(item.uri)))
        elif kind == "t":
            try:
                fields = [(name, "", True) for name in template_variables(item.uri_template)]
            except ValueError as exc:  # the server's template is not RFC 6570
                self.reading = None
                self.query_one("#catalog-reading", Static).update(
                    Text(literal(f"Cannot fill in this template: {exc}"), style="red")
                )
                return

            def read(values: dict[str, str] | None) -> None:
                if values is not None:
                    uri = expand_template(item.uri_template, values)
                    self.fetch(lambda: self.connection.read_resource(uri))

            complete = partial(self.connection.complete, ("ref/resource", item.uri_template))
            self.app.push_screen(
                ArgumentsModal(f"Read {item.uri_template}", fields, complete), read
            )
        else:
            arguments = [
                (a.name, a.description or "", bool(a.required)) for a in item.arguments or []
            ]

            def get(values: dict[str, str] | None) -> None:
                if values is not None:
                    self.fetch(lambda: self.connection.get_prompt(item.name, values))

            if arguments:
                complete = partial(self.connection.complete, ("ref/prompt", item.name))
                self.app.push_screen(
                    ArgumentsModal(f"Prompt {item.name}", arguments, complete), get
                )
            else:
                get({})

    @work(group="mcp-catalog", exclusive=True, exit_on_error=False)
    async def fetch(self, request: Callable[[], Any]) -> None:
        shown = self.query_one("#catalog-reading", Static)
        shown.update(Text("Asking the server…", style="dim"))
        try:
            self.reading = await request()
        except McpCallError as exc:
            self.reading = None
            shown.update(Text(literal(str(exc)), style="red"))
            return
        text = Text("\n")
        text.append(literal(self.reading.text()))
        text.append("\n\na attaches this to your next message.", style="dim")
        shown.update(text)

    def action_attach(self) -> None:
        if self.reading is None:
            self.notify(
                "Read a resource or get a prompt first (Enter).", severity="warning", markup=False
            )
            return
        count = self._attach_reading(self.reading)
        self.notify(
            f"Attached to your next message ({count} attached): "
            f"{self.reading.heading.splitlines()[0]}",
            markup=False,
        )

    def action_drop(self) -> None:
        count = self._drop_readings()
        self.notify(
            f"Dropped {count} attachments." if count else "Nothing was attached.", markup=False
        )

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
