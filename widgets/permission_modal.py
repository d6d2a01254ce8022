"""PermissionModal: the dialog behind the gate's "ask".

Shows the tool, its description, why it asks, and the validated arguments (with
what changed since the model's raw ones). The answer goes straight to
`PermissionGate.decide`; a refused answer (invalid edited arguments, say) keeps
the dialog open with the reason.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static

from widgets.json_editor import JsonEditModal
from widgets.render import stage_view
from workbench.agent import AgentTool
from workbench.json_text import normal
from workbench.permissions import AnswerError, PermissionAnswer, PermissionGate
from workbench.sanitize import literal
from workbench.view.records import ToolCallRecord


class PermissionModal(ModalScreen[str | None]):
    """Allow once, allow always (tool or pattern), deny with a reason, or edit and allow."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer('once')", "Allow once"),
        Binding("A", "answer('tool')", "Always (tool)"),
        Binding("p", "answer('pattern')", "Always (pattern)"),
        Binding("d", "answer('deny')", "Deny"),
        Binding("e", "edit", "Edit args"),
    ]

    DEFAULT_CSS = """
    PermissionModal { align: center middle; }
    PermissionModal > Vertical { width: 100; max-width: 96%; height: auto; max-height: 94%; border: thick $warning; background: $surface; padding: 0 1; }
    PermissionModal #perm-title { text-style: bold; }
    PermissionModal #perm-counter, PermissionModal #perm-desc { color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    PermissionModal #perm-desc { text-style: italic; }
    PermissionModal #perm-args { height: auto; max-height: 45vh; min-height: 4; border: round $panel-lighten-2; padding: 0 1; }
    PermissionModal #perm-protected { color: $error; text-style: bold; height: auto; }
    PermissionModal #perm-error { color: $error; height: auto; display: none; }
    PermissionModal #perm-error.-shown { display: block; }
    PermissionModal Input { margin: 1 0 0 0; background: $boost; }
    PermissionModal .buttons { height: auto; margin: 1 0 0 0; }
    PermissionModal .buttons.second { margin: 0; }
    PermissionModal Button { margin: 0 2 0 0; }
    PermissionModal Checkbox { margin: 0; }
    """

    def __init__(
        self,
        record: ToolCallRecord,
        *,
        tool: AgentTool | None,
        gate: PermissionGate,
        request_id: str,
        position: tuple[int, int] = (1, 1),
        pending: int = 1,
    ) -> None:
        super().__init__()
        self.record = record
        self.tool = tool
        self.gate = gate
        self.request_id = request_id
        self.position = position
        self.pending_count = pending
        request = next((r for r in gate.pending if r.request_id == request_id), None)
        self.suggested_pattern = request.suggested_pattern if request else record.name
        self.rule_text = str(request.rule) if request is not None and request.rule else None
        self.protected = request.protected if request is not None else None
        """The gate's warning when the call changes a protected path (.git/, .workbench/)."""

    def compose(self) -> ComposeResult:
        record = self.record
        label = self.tool.label if self.tool else record.name
        with Vertical():
            title = Text("Allow ")
            title.append(literal(label), style="bold")
            title.append(f" ({literal(record.name)})?", style="")
            title.append("   ctrl+c cancels the run", style="dim not bold")
            yield Static(title, id="perm-title")
            index, size = self.position
            counter = (
                f"request 1 of {self.pending_count} waiting · call {index} of {size} in this batch · "
                f"id {record.id}" + (f" · asked by rule {self.rule_text}" if self.rule_text else "")
            )
            yield Static(Text(literal(counter)), id="perm-counter")
            lines = self.tool.description.splitlines() if self.tool else ["unknown tool"]
            desc = Text(literal(lines[0] if lines else "(no description)"))
            source = self.tool.source if self.tool else None
            if source and source != "builtin":  # where the code that will run lives
                desc.append(f"  · from {literal(source)}", style="bold cyan")
            yield Static(desc, id="perm-desc")
            if self.protected is not None:
                yield Static(Text(literal(self.protected)), id="perm-protected")
            with VerticalScroll(id="perm-args"):
                yield Static(self._args_text())
            yield Static("", id="perm-error")
            yield Input(
                placeholder="Reason for the model if you deny (optional) — Enter denies",
                id="reason",
                compact=True,
            )
            with Horizontal(classes="buttons"):
                yield Button(Text("Allow once (a)"), variant="success", id="once", compact=True)
                yield Button(Text("Deny (d)"), variant="error", id="deny", compact=True)
                yield Button(Text("Edit args (e)"), variant="primary", id="edit", compact=True)
            with Horizontal(classes="buttons second"):
                yield Button(Text(f"Always {literal(record.name)} (A)"), id="tool", compact=True)
                pattern = literal(self.suggested_pattern)
                if len(pattern) > 48:
                    pattern = pattern[:47] + "…"
                yield Button(Text(f"Always {pattern} (p)"), id="pattern", compact=True)
            yield Checkbox("also save “always” answers to the rules file", id="save", compact=True)

    def _args_text(self) -> Text:
        record = self.record
        args = record.validated if record.validated is not None else record.parsed
        text = Text("validated arguments", style="bold")
        if record.parsed is not None and args != record.parsed:
            text.append("  (+ added, ~ changed since the model's arguments)", style="dim")
        text.append("\n")
        text.append_text(stage_view(args, record.parsed))
        raw = record.raw
        if raw is not None and normal(raw) != normal(json.dumps(args)):
            text.append("\nraw, as the model sent it\n", style="bold")
            text.append(literal(raw), style="dim")
        return text

    def on_mount(self) -> None:
        self.query_one("#once", Button).focus()

    # -- answers -------------------------------------------------------------------

    def _answer(self, answer: PermissionAnswer) -> bool:
        try:
            self.gate.decide(self.request_id, answer)
        except AnswerError as exc:
            error = self.query_one("#perm-error", Static)
            error.update(Text(literal(str(exc))))
            error.add_class("-shown")
            return False
        self.dismiss(answer.kind)
        return True

    def action_answer(self, kind: str) -> None:
        save = self.query_one("#save", Checkbox).value
        if kind == "once":
            self._answer(PermissionAnswer.allow_once())
        elif kind == "tool":
            self._answer(PermissionAnswer.always_tool(save=save))
        elif kind == "pattern":
            self._answer(PermissionAnswer.always_pattern(self.suggested_pattern, save=save))
        elif kind == "deny":
            reason = self.query_one("#reason", Input).value.strip() or None
            self._answer(PermissionAnswer.deny(reason))

    def action_edit(self) -> None:
        record = self.record
        args = record.validated if record.validated is not None else (record.parsed or {})

        def submit(new_args: dict[str, Any]) -> None:
            self.gate.decide(self.request_id, PermissionAnswer.edit(new_args))

        def closed(result: dict[str, Any] | None) -> None:
            if result is not None:
                self.dismiss("edit_and_allow")

        self.app.push_screen(JsonEditModal(f"Edit the arguments of {record.name}, then allow", args, submit), closed)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "edit":
            self.action_edit()
        elif event.button.id in ("once", "tool", "pattern", "deny"):
            self.action_answer(event.button.id)

    @on(Input.Submitted, "#reason")
    def _reason_submitted(self) -> None:
        self.action_answer("deny")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letter keys answer only when the reason box does not have the cursor."""
        if action in ("answer", "edit") and isinstance(self.focused, Input):
            return False
        return True

