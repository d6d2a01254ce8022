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
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from workbench.agent import AgentTool
from workbench.json_text import normal
from workbench.permissions import AnswerError, PermissionAnswer, PermissionGate
from workbench.permissions.edits import NOT_EDITABLE
from workbench.sanitize import literal
from workbench.view.records import ToolCallRecord
from workbench.widgets.clear_checkbox import ClearCheckbox
from workbench.widgets.footer import Footer
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.render import stage_view


class PermissionModal(ModalScreen[str | None]):
    """Allow once, allow always (tool or pattern), deny with a reason, or edit and allow.

    Safe to type into: no letter decides anything. Typing anywhere in the dialog goes
    to the reason box, where Enter denies with that reason; allowing takes ctrl+y (or
    a button), so a sentence typed into a fresh dialog never approves the call.

    | Key | Does |
    | --- | --- |
    | ctrl+y | allow once |
    | ctrl+n | deny: into the reason box; there, Enter (or ctrl+n) denies |
    | F2 | edit the arguments, then allow |
    | tab / shift+tab | move between the reason box and the buttons |
    | escape | out of the reason box |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+y", "answer('once')", "Allow once"),
        Binding("ctrl+n", "deny", "Deny…"),
        Binding("f2", "edit", "Edit args"),
        Binding("tab", "app.focus_next", "Next"),
        Binding("escape", "leave_reason", "Out of the reason box"),
    ]

    DEFAULT_CSS = """
    PermissionModal { align: center middle; }
    PermissionModal > Vertical {
        width: 100; max-width: 96%; height: auto; max-height: 94%; border: thick $warning;
        background: $surface; padding: 0 1;
    }
    PermissionModal #perm-title { text-style: bold; }
    PermissionModal #perm-counter, PermissionModal #perm-desc {
        color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis;
    }
    PermissionModal #perm-desc { text-style: italic; }
    PermissionModal #perm-hints { color: $text-muted; height: auto; }
    PermissionModal #perm-args {
        height: auto; max-height: 45vh; min-height: 4; border: round $panel-lighten-2; padding: 0 1;
    }
    PermissionModal #perm-protected { color: $error; text-style: bold; height: auto; }
    PermissionModal #perm-args:focus { border: round $accent; }
    PermissionModal #perm-error { color: $error; height: auto; display: none; }
    PermissionModal #perm-error.-shown { display: block; }
    PermissionModal Input { margin: 1 0 0 0; background: $boost; }
    PermissionModal Input:focus { background: $accent 30%; text-style: bold; }
    PermissionModal #reason-hint { color: $text-muted; height: 1; }
    PermissionModal #reason-hint.-active { color: $accent; text-style: bold; }
    PermissionModal #perm-noedit { color: $text-muted; height: auto; }
    PermissionModal .buttons { height: auto; }
    PermissionModal .buttons.second { margin: 0; }
    PermissionModal Button { margin: 0 2 0 0; }
    PermissionModal Button:focus {
        background: $accent !important; color: $background !important; text-style: bold !important;
    }
    PermissionModal ClearCheckbox { margin: 0; }
    PermissionModal ClearCheckbox:focus > .toggle--label { text-style: bold reverse; }
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
                f"request 1 of {self.pending_count} waiting · "
                f"call {index} of {size} in this batch · id {record.id}"
                + (f" · asked by rule {self.rule_text}" if self.rule_text else "")
            )
            yield Static(Text(literal(counter)), id="perm-counter")
            lines = self.tool.description.splitlines() if self.tool else ["unknown tool"]
            # Where the code that will run lives, first: a long description is cut.
            source = self.tool.source if self.tool else None
            desc = Text()
            if source == "builtin":
                desc.append("builtin · ", style="dim")
            elif source:
                desc.append(f"from {literal(source)} · ", style="bold cyan")
            desc.append(literal(lines[0] if lines else "(no description)"))
            yield Static(desc, id="perm-desc")
            hints = getattr(self.tool, "hints", None)
            if hints is not None and hints.words():
                yield Static(hint_line(hints), id="perm-hints")
            if self.protected is not None:
                yield Static(Text(literal(self.protected)), id="perm-protected")
            with VerticalScroll(id="perm-args"):
                yield Static(self._args_text())
            yield Static("", id="perm-error")
            yield Input(
                placeholder="Reason for the model if you deny (optional)"
                if self.editable
                else "Reason if you deny (recorded; ACP cannot pass it on to the agent)",
                id="reason",
                compact=True,
                select_on_focus=False,
            )
            yield Static(REASON_HINT, id="reason-hint")
            if not self.editable:
                yield Static(Text(f"Edit args: off. {NOT_EDITABLE}", style="dim"), id="perm-noedit")
            with Horizontal(classes="buttons"):
                yield Button(
                    Text("Allow once (ctrl+y)"), variant="success", id="once", compact=True
                )
                yield Button(Text("Deny (ctrl+n)"), variant="error", id="deny", compact=True)
                yield Button(
                    Text("Edit args (F2)"),
                    variant="primary",
                    id="edit",
                    compact=True,
                    disabled=not self.editable,
                    tooltip=None if self.editable else NOT_EDITABLE,
                )
            with Horizontal(classes="buttons second"):
                yield Button(Text(f"Always allow {literal(record.name)}"), id="tool", compact=True)
                if (
                    self.suggested_pattern != record.name
                ):  # a tool without arguments: the same answer
                    pattern = literal(self.suggested_pattern)
                    if len(pattern) > 48:
                        pattern = pattern[:47] + "…"
                    yield Button(Text(f"Always allow {pattern}"), id="pattern", compact=True)
            yield ClearCheckbox(
                "also save “always” answers to the rules file", id="save", compact=True
            )
        yield Footer()

    @property
    def editable(self) -> bool:
        """An ACP agent's call runs the agent's own arguments: there is nothing to edit."""
        return self.tool is None or self.tool.source != "acp"

    def _args_text(self) -> Text:
        record = self.record
        # What the gate judges: the request's arguments, exactly what would run (after
        # an edit at failed arguments, say, not the model's).
        args = record.request.args if record.request is not None else record.ran_args
        text = Text("validated arguments", style="bold")
        if record.edited_args is not None:
            text.append("  ✎ edited by you", style="bold yellow")
        sender = "you" if record.by_hand else "the model"
        if record.by_hand:
            text.append("  called by you, by hand", style="bold yellow")
        if record.parsed is not None and args != record.parsed:
            whose = "your" if record.by_hand else "the model's"
            text.append(f"  (+ added, ~ changed since {whose} arguments)", style="dim")
        text.append("\n")
        text.append_text(stage_view(args, record.parsed))
        raw = record.raw
        if raw is not None and normal(raw) != normal(json.dumps(args)):
            text.append(f"\nraw, as {sender} sent it\n", style="bold")
            text.append(literal(raw), style="dim")
        return text

    def on_mount(self) -> None:
        # Not on a button: an Enter typed out of habit must not answer.
        self.query_one("#perm-args").focus()

    @property
    def reason(self) -> Input:
        return self.query_one("#reason", Input)

    def on_key(self, event: events.Key) -> None:
        """Typing outside the reason box goes into it: prose never presses a button."""
        if event.is_printable and event.character and not isinstance(self.focused, Input):
            event.stop()
            event.prevent_default()
            self.reason.focus()
            self.reason.insert_text_at_cursor(event.character)

    @on(events.DescendantFocus)
    @on(events.DescendantBlur)
    def _focus_moved(self) -> None:
        in_reason = isinstance(self.focused, Input)
        hint = self.query_one("#reason-hint", Static)
        hint.update(DENY_HINT if in_reason else REASON_HINT)
        hint.set_class(in_reason, "-active")
        self.refresh_bindings()

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
        save = self.query_one("#save", ClearCheckbox).value
        if kind == "once":
            self._answer(PermissionAnswer.allow_once())
        elif kind == "tool":
            self._answer(PermissionAnswer.always_tool(save=save))
        elif kind == "pattern":
            self._answer(PermissionAnswer.always_pattern(self.suggested_pattern, save=save))
        elif kind == "deny":
            reason = self.reason.value.strip() or None
            self._answer(PermissionAnswer.deny(reason))

    def action_deny(self) -> None:
        """The reason box first (the natural next step); from there, deny."""
        if isinstance(self.focused, Input):
            self.action_answer("deny")
        else:
            self.reason.focus()

    def action_leave_reason(self) -> None:
        self.query_one("#perm-args").focus()

    def action_edit(self) -> None:
        if not self.editable:
            return
        record = self.record
        args = (record.request.args if record.request is not None else record.ran_args) or {}

        def submit(new_args: dict[str, Any]) -> None:
            self.gate.decide(self.request_id, PermissionAnswer.edit(new_args))

        def closed(result: dict[str, Any] | None) -> None:
            if result is not None:
                self.dismiss("edit_and_allow")

        self.app.push_screen(
            JsonEditModal(f"Edit the arguments of {record.name}, then allow", args, submit), closed
        )

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
        """Escape leaves the reason box; elsewhere it does nothing here."""
        if action == "leave_reason":
            return isinstance(self.focused, Input)
        if action == "edit":
            return self.editable
        return True


REASON_HINT = Text("Type a reason to deny with it · ctrl+y allows once", style="")
DENY_HINT = Text("Enter denies with this reason · esc leaves the box · ctrl+y allows once instead")


def _normal(text: str) -> str:
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except (ValueError, TypeError):
        return text


def hint_line(hints: Any) -> Text:
    """What the tool's origin says about it, and whether the gate believes it."""
    text = Text(f"{literal(hints.origin)} says: ", style="dim")
    for i, word in enumerate(hints.words()):
        text.append(", " if i else "")
        text.append(word, style="bold red" if word == "destructive" else "bold")
    believed = "trusted (trust_hints)" if hints.trusted else "hints only; not trusted"
    text.append(f"  · {believed}", style="dim")
    return text
