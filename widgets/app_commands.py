"""The live app's command palette (ctrl+p): every key's action, said in words, and the
commands that have no key.

A mixin of `WorkbenchApp`, placed before `App` so `super().get_system_commands` is
Textual's (themes, quit, keys).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

if TYPE_CHECKING:
    from workbench.widgets.main_screen import MainScreen
    from workbench.widgets.tool_inspector import ToolInspector

COMMAND_HELP = {
    "cancel_run": "Fire the run's abort signal (works in dialogs too)",
    "help": "Keys and what the screen shows",
    "toggle_step": "Pause before every model request and tool execution",
    "step": "At a pause: go to the next pause point",
    "continue_run": "At a pause: leave step mode and run to the next breakpoint",
    "run_to_end": "At a pause: ignore every pause until this run ends",
    "toggle_breakpoint": "Break on the selected call's tool",
    "breakpoints": "Add or remove breakpoints of every kind",
    "edit_paused": (
        "At a pause before a tool or at failed arguments: edit the arguments (re-validated)"
    ),
    "answer_paused": "At a pause before a tool: answer it yourself; at @error: replace the result",
    "cancel_call": "Cancel only the selected running call",
    "focus_prompt": "Put the cursor in the message box",
    "network_view": "The network view: every model request as sent, and where the run's time went",
    "mcp_servers": "Each MCP server's state, tools, log and stderr; restart one",
    "new_run": "Start again: a new session, a fresh scratch workspace, the scenario's prompt",
    "rewind": "Back to the end of an earlier turn: its files put back, on in a fork",
    "sessions": "The session library: search recorded sessions, open one in replay",
}
"""What each key's action does, as the palette says it."""


class AppCommands:
    """`get_system_commands` for `WorkbenchApp`."""

    BINDINGS: ClassVar[list[BindingType]]
    runtime: Any
    main: MainScreen
    if TYPE_CHECKING:

        @property
        def inspector(self) -> ToolInspector: ...

    run_action: Any
    restart_mcp_server: Any
    action_call_by_hand: Any
    linked_resources: Any
    open_mcp_catalog: Any
    image_commands: Any

    def get_system_commands(self, screen: Screen[Any]) -> Iterator[SystemCommand]:
        yield from super().get_system_commands(screen)  # type: ignore[misc]
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            if binding.description:
                yield SystemCommand(
                    f"{binding.description} ({binding.key})",
                    COMMAND_HELP.get(binding.action, binding.action),
                    lambda action=binding.action: self.run_action(action),
                )
        hub = self.runtime.mcp
        for connection in hub.connections if hub is not None else ():
            if connection.status in ("failed", "exited"):
                yield SystemCommand(
                    f"Restart MCP server {connection.name}",
                    f"It {connection.status}: start it again and list its tools anew",
                    lambda name=connection.name: self.restart_mcp_server(name),
                )
        yield SystemCommand(
            "Call a tool by hand…",
            "Pick any tool, fill its arguments, run it as a model's call (the model never sees it)",
            self.action_call_by_hand,
        )
        linked = self.linked_resources(self.inspector.record)
        if linked is not None:
            yield SystemCommand(
                "MCP resources in the selected call's result",
                "Read the resources its result links to or embeds, and attach them",
                lambda: self.open_mcp_catalog(*linked),
            )
        yield from self.image_commands()
        if screen is self.main:
            yield SystemCommand(
                "Thinking (t in the timeline)",
                "Open every thinking block in the timeline, or close them all",
                self.main.timeline.action_toggle_thinking,
            )
