"""Dialogs for what an MCP server asks the user: input (elicitation) and a model reply
(sampling), and `AppAsker`, which opens them for the hub.

Both are safe to type into: no letter decides anything. ctrl+y accepts (sends),
ctrl+n declines, Escape cancels. Everything a server sent is shown literally. A
dialog whose request the server cancels closes, and nothing it held runs after.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import mcp_types
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from workbench.mcp.requests import WRITTEN, SampleFn, declined, sent_parameters
from workbench.sanitize import literal
from workbench.widgets.footer import Footer
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.schema_form import SchemaForm
from workbench.widgets.terminal_safety import LiteralInput


class _AskModal(ModalScreen[Any]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+y", "accept", "Accept"),
        Binding("ctrl+n", "decline", "Decline"),
        Binding("escape", "cancel", "Cancel"),
    ]

    DEFAULT_CSS = """
    _AskModal { align: center middle; }
    _AskModal > Vertical {
        width: 90; max-width: 95%; height: auto; max-height: 90%; border: thick $warning;
        background: $surface; padding: 0 1;
    }
    _AskModal .title { text-style: bold; margin: 0 0 1 0; }
    _AskModal .label { margin: 1 0 0 0; }
    _AskModal .error { color: $error; height: auto; }
    _AskModal VerticalScroll { height: auto; max-height: 16; }
    _AskModal TextArea { height: 8; }
    _AskModal .model { height: 1; margin: 1 0 0 0; }
    _AskModal .model > Static { width: auto; margin: 0; }
    _AskModal .model > Input { width: 1fr; }
    _AskModal Horizontal { height: auto; align-horizontal: right; margin: 1 0 0 0; }
    _AskModal Button { margin: 0 0 0 1; }
    """

    def buttons(self, accept: str) -> ComposeResult:
        with Horizontal():
            yield Button(f"{accept} (ctrl+y)", variant="success", id="accept", compact=True)
            yield Button("Decline (ctrl+n)", variant="error", id="decline", compact=True)
            yield Button("Cancel (esc)", id="cancel", compact=True)

    @on(Button.Pressed, "#accept, #decline, #cancel")
    async def _pressed(self, event: Button.Pressed) -> None:
        await self.run_action(str(event.button.id))

    def action_decline(self) -> None:
        self.dismiss(("decline", None))

    def action_cancel(self) -> None:
        self.dismiss(("cancel", None))


class ElicitationModal(_AskModal):
    """A server asks the user for input: a form generated from its JSON Schema, or a
    URL to visit. Dismissed with (action, content)."""

    def __init__(self, server: str, params: Any) -> None:
        super().__init__()
        self.server = server
        self.params = params
        self.schema: dict[str, Any] = getattr(params, "requested_schema", None) or {}

    def compose(self) -> ComposeResult:
        url = getattr(self.params, "url", None)
        with Vertical():
            yield Static(Text(f"MCP server {literal(self.server)} asks you:"), classes="title")
            yield Static(Text(literal(self.params.message)))
            if url is not None:
                yield Static(Text("It wants you to open this address yourself:"), classes="label")
                yield Static(Text(literal(url), style="bold underline"), id="elicit-url")
                yield from self.buttons("I will open it")
            else:
                yield SchemaForm(self.schema)
                yield Static("", id="elicit-error", classes="error")
                yield from self.buttons("Send")
        yield Footer()

    def on_mount(self) -> None:
        inputs = self.query("Input, Checkbox, Select")
        (inputs.first() if inputs else self.query_one("#accept")).focus()

    def action_accept(self) -> None:
        if getattr(self.params, "url", None) is not None:
            self.dismiss(("accept", None))
            return
        form = self.query_one(SchemaForm)
        values = form.values()
        problems = form.problems(values)
        if problems:
            self.query_one("#elicit-error", Static).update(Text(literal("\n".join(problems))))
            return
        self.dismiss(("accept", values))


class SamplingModal(_AskModal):
    """A server asks for a model reply: its request and parameters (and which of them
    reach the model), a reply a person writes, or generates with a model they pick
    (ctrl+g) and then reviews and edits, and approves (ctrl+y). F2 edits the request.
    Dismissed with (action, CreateMessageResult or None)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+g", "generate", "Generate"),
        Binding("f2", "edit", "Edit request"),
    ]

    def __init__(
        self,
        server: str,
        params: mcp_types.CreateMessageRequestParams,
        generate: SampleFn | None = None,
        *,
        model: str = "",
        configurable: bool = False,
    ) -> None:
        super().__init__()
        self.server = server
        self.params = params
        self.request = request_of(params)
        self.generate = generate
        self.model = model
        self.configurable = configurable
        self.generated: mcp_types.CreateMessageResult | None = None
        self.withdrawn = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text(f"MCP server {literal(self.server)} asks the model for a reply"),
                classes="title",
            )
            with VerticalScroll():
                yield Static(self._shown(), id="sample-request")
                yield Static(self._parameters(), id="sample-parameters")
            with Horizontal(classes="model"):
                yield Static("model ", classes="label")
                yield LiteralInput(
                    self.model, id="sample-model", disabled=not self.configurable, compact=True
                )
            yield Static("reply (write one, or generate it with ctrl+g, then approve)")
            yield TextArea("", id="sample-reply", soft_wrap=True)
            yield Static("", classes="error", id="sample-error")
            with Horizontal():
                yield Button("Generate (ctrl+g)", id="generate", compact=True)
                yield Button("Approve (ctrl+y)", variant="success", id="accept", compact=True)
                yield Button("Decline (ctrl+n)", variant="error", id="decline", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)
        yield Footer()

    @on(Button.Pressed, "#generate")
    async def _generate_pressed(self) -> None:
        await self.run_action("generate")

    def on_mount(self) -> None:
        self.query_one("#generate" if self.generate else "#sample-reply").focus()

    def _shown(self) -> Text:
        text = Text()
        if self.request.get("system_prompt"):
            text.append("system  ", style="bold")
            text.append(literal(str(self.request["system_prompt"])) + "\n")
        for message in self.request.get("messages", []):
            text.append(f"{literal(str(message.get('role')))}  ", style="bold")
            text.append(literal(str(message.get("text", ""))) + "\n")
        return text

    def _parameters(self) -> Text:
        lines = sent_parameters(self.params, self.configurable)
        return Text(literal("\n".join(lines)), style="dim")

    def _say(self, text: str) -> None:
        self.query_one("#sample-error", Static).update(Text(literal(text)))

    def action_generate(self) -> None:
        if self.withdrawn:
            return
        if self.generate is None:
            self._say("This run has no model to generate a reply with: write one.")
            return
        self._say("Generating…")
        self._run_model()

    @work(exclusive=True, exit_on_error=False)
    async def _run_model(self) -> None:
        assert self.generate is not None
        model = self.query_one("#sample-model", Input).value.strip() or None
        try:
            result = await self.generate(params_of(self.params, self.request), model)
        except Exception as exc:  # noqa: BLE001 - said in the dialog; the person decides
            self._say(f"The model failed: {exc}")
            return
        if self.withdrawn:
            return
        self.generated = result
        self.query_one("#sample-reply", TextArea).text = reply_text(result)
        self._say(
            f"Generated by {result.model} (stop: {result.stop_reason}). Review or edit it, "
            "then approve (ctrl+y)."
        )

    def action_accept(self) -> None:
        if self.withdrawn:
            return
        text = self.query_one("#sample-reply", TextArea).text
        if not text.strip() and self.generated is None:
            self._say("The reply is empty: write one, or generate it (ctrl+g).")
            return
        result = self.generated
        if result is None or reply_text(result) != text:
            result = mcp_types.CreateMessageResult(
                role="assistant",
                content=mcp_types.TextContent(type="text", text=text),
                model=WRITTEN,
                stop_reason="endTurn",
            )
        self.dismiss(("accept", result))

    def withdraw(self) -> None:
        """The server cancelled its request: close, and let nothing run after."""
        self.withdrawn = True
        self.workers.cancel_all()
        app = self.app
        while self in app.screen_stack:
            if app.screen is self:
                self.dismiss(("cancel", None))
                break
            app.pop_screen()

    def action_edit(self) -> None:
        def submit(edited: dict[str, Any]) -> dict[str, Any]:
            if not isinstance(edited.get("messages"), list) or not edited["messages"]:
                raise ValueError("messages: a list of {role, text} is needed")
            return edited

        def closed(edited: dict[str, Any] | None) -> None:
            if edited is not None:
                self.request = edited
                self.query_one("#sample-request", Static).update(self._shown())

        title = f"Edit the sampling request of {self.server}, then generate"
        self.app.push_screen(JsonEditModal(title, self.request, submit), closed)


class AppAsker:
    """Answers the servers' requests with the dialogs above (one at a time)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._one_at_a_time = asyncio.Lock()

    async def _ask(self, screen: Any) -> Any:
        async with self._one_at_a_time:
            answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def settle(result: Any) -> None:
                if not answer.done():
                    answer.set_result(result)

            self.app.push_screen(screen, settle)
            try:
                return await answer
            except BaseException:  # the server cancelled its request: the dialog goes
                if hasattr(screen, "withdraw"):
                    screen.withdraw()
                raise

    async def elicit(self, server: str, params: Any) -> mcp_types.ElicitResult:
        action, content = await self._ask(ElicitationModal(server, params))
        return mcp_types.ElicitResult(action=action, content=content)

    async def sample(
        self, server: str, params: mcp_types.CreateMessageRequestParams, run: SampleFn
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        hub = getattr(getattr(self.app, "runtime", None), "mcp", None)
        sampler = getattr(hub, "sampler", None)
        screen = SamplingModal(
            server,
            params,
            run,
            model=str(getattr(getattr(sampler, "model", None), "id", "")),
            configurable=bool(sampler is not None and sampler.configurable()),
        )
        action, result = await self._ask(screen)
        if action != "accept":
            return declined(
                f"the user {'declined' if action == 'decline' else 'cancelled'} "
                "the sampling request"
            )
        self.app.notify(f"MCP server {server}'s sampling request was answered", markup=False)
        assert isinstance(result, mcp_types.CreateMessageResult)
        return result


def reply_text(result: mcp_types.CreateMessageResult) -> str:
    content = result.content
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(getattr(b, "text", f"[{getattr(b, 'type', 'content')}]") for b in blocks)


def request_of(params: mcp_types.CreateMessageRequestParams) -> dict[str, Any]:
    """A sampling request as a person reads and edits it: text messages."""
    return {
        "system_prompt": params.system_prompt or "",
        "messages": [
            {
                "role": m.role,
                "text": "\n".join(
                    getattr(c, "text", f"[{getattr(c, 'type', 'content')}]")
                    for c in (m.content if isinstance(m.content, list) else [m.content])
                ),
            }
            for m in params.messages
        ],
        "max_tokens": params.max_tokens,
    }


def params_of(
    params: mcp_types.CreateMessageRequestParams, request: dict[str, Any]
) -> mcp_types.CreateMessageRequestParams:
    """`params` with what the person edited (the text of the messages, the prompt)."""
    messages = [
        mcp_types.SamplingMessage(
            role="assistant" if m.get("role") == "assistant" else "user",
            content=mcp_types.TextContent(type="text", text=str(m.get("text", ""))),
        )
        for m in request["messages"]
    ]
    return params.model_copy(
        update={
            "messages": messages,
            "system_prompt": str(request.get("system_prompt") or "") or None,
        }
    )
