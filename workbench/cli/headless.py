"""`workbench --headless`: run once without the app and print the event stream readably.

Every piece of untrusted text goes through `sanitize.literal` and into a Rich
`Text`, so model output can neither inject markup nor terminal escapes.
"""

from __future__ import annotations

import json
import signal as signals
from typing import Any

import anyio
from rich.console import Console
from rich.text import Text

from workbench import gc_policy
from workbench.agent import AssistantMessage, ToolResultMessage, UserMessage
from workbench.agent.types import text_of
from workbench.runtime import Runtime
from workbench.sanitize import literal, one_line

EXIT_FINISHED = 0
EXIT_ERROR = 1
EXIT_ABORTED = 130


class EventPrinter:
    """Prints bus events as a compact, readable log."""

    def __init__(self, console: Console, prefix: str = "") -> None:
        self.console = console
        self.prefix = prefix
        """Put before every line (proxy mode: which conversation it belongs to)."""
        self.turn = 0
        self.tool_calls = 0
        self.started: dict[str, float] = {}

    def line(self, *parts: tuple[str, str] | str) -> None:
        text = Text(self.prefix, style="dim")
        for part in parts:
            if isinstance(part, tuple):
                text.append(literal(part[0]), style=part[1])
            else:
                text.append(literal(part))
        self.console.print(text, soft_wrap=True)

    def __call__(self, event: Any, _signal: Any = None) -> None:
        handler = getattr(self, f"on_{event.type}", None)
        if handler is not None:
            handler(event)

    def on_turn_start(self, event: Any) -> None:
        self.turn += 1
        self.console.rule(Text(f"{self.prefix}turn {self.turn}", style="bold"), style="dim")

    def on_message_end(self, event: Any) -> None:
        message = event.message
        if isinstance(message, UserMessage):
            self.line(("user ", "bold cyan"), text_of(message.content))
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if block.type == "thinking":
                    self.line(("thinking ", "dim italic"), (block.thinking, "dim italic"))
                elif block.type == "text" and block.text:
                    self.line(("assistant ", "bold green"), block.text)
            if message.stop_reason in ("error", "aborted"):
                self.line((f"model {message.stop_reason}: ", "bold red"), message.error_message or "")
        elif isinstance(message, ToolResultMessage):
            style = "red" if message.is_error else "green"
            mark = "✗" if message.is_error else "✓"
            self.line((f"  {mark} result ", style), (message.tool_name, "bold"), f" [{message.tool_call_id}] ")
            for row in message.text.splitlines()[:12]:
                self.line(("    │ ", "dim"), row)
            if len(message.text.splitlines()) > 12:
                self.line(("    │ …", "dim"))

    def on_tool_execution_start(self, event: Any) -> None:
        self.tool_calls += 1
        self.started[event.tool_call_id] = event.timestamp
        args = json.dumps(event.args, ensure_ascii=False)
        self.line(("  → ", "yellow"), (event.tool_name, "bold yellow"), " ", one_line(args, 100), (f"  [{event.tool_call_id}]", "dim"))

    def on_tool_arguments(self, event: Any) -> None:
        if event.failed_stage is not None:
            self.line(("    ✗ ", "red"), (f"{event.failed_stage} failed: ", "red"), one_line(event.error or "", 110))

    def on_tool_execution_update(self, event: Any) -> None:
        text = "".join(getattr(c, "text", "") for c in event.partial_result.content)
        self.line(("    … ", "dim"), (one_line(text.splitlines()[-1] if text.strip() else "", 110), "dim"))

    def on_tool_execution_end(self, event: Any) -> None:
        ms = event.timestamp - self.started.pop(event.tool_call_id, event.timestamp)
        status = ("error", "red") if event.is_error else ("done", "green")
        extra = " (injected)" if event.injected else ""
        self.line(("  ■ ", status[1]), (event.tool_name, "bold"), f" {status[0]}{extra} in {ms:.0f} ms")

    def on_permission_request(self, event: Any) -> None:
        self.line(("  ? ", "magenta"), f"permission asked for {event.tool_name} [{event.tool_call_id}]")

    def on_permission_decision(self, event: Any) -> None:
        who = event.decided_by + (f" ({event.rule} from {event.rule_source})" if event.rule else "")
        reason = f": {event.reason}" if event.reason else ""
        self.line(("  ! ", "magenta"), f"{event.decision} {event.tool_name} by {who}{reason}")

    def on_agent_end(self, event: Any) -> None:
        ended = f"{self.prefix}end: {self.turn} turns, {self.tool_calls} tool calls"
        self.console.rule(Text(ended, style="bold"), style="dim")


def exit_code(runtime: Runtime) -> int:
    """0 finished, 1 the model or the run ended in error, 130 aborted."""
    messages = runtime.agent.state.messages
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is None:
        return EXIT_ERROR
    if last.stop_reason == "aborted":
        return EXIT_ABORTED
    if last.stop_reason == "error":
        return EXIT_ERROR
    return EXIT_FINISHED


async def run_headless(runtime: Runtime, prompt: str, console: Console | None = None) -> int:
    """Run one prompt to completion, printing events; Ctrl-C aborts the run cleanly."""
    console = console or Console(highlight=False)
    runtime.agent.subscribe(EventPrinter(console))

    async def abort_on_sigint() -> None:
        with anyio.open_signal_receiver(signals.SIGINT) as received:
            async for _ in received:
                runtime.agent.abort("Interrupted (Ctrl-C)")
                return

    with gc_policy.session_gc():
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_on_sigint)
            await runtime.agent.prompt(prompt)
            tg.cancel_scope.cancel()
    return exit_code(runtime)
