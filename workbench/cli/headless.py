"""`workbench --headless`: run once without the app and print the event stream readably.

Every piece of untrusted text goes through `sanitize.literal` and into a Rich
`Text`, so model output can neither inject markup nor terminal escapes.
"""

from __future__ import annotations

import json
import os
import signal as signals
import sys
import time
from collections.abc import Callable
from typing import IO, Any

import anyio
from rich.console import Console
from rich.text import Text

from workbench import gc_policy
from workbench.agent import AssistantMessage, ToolResultMessage, UserMessage
from workbench.agent.types import Usage, result_text, text_of
from workbench.cli.args import EXIT_MAX_TURNS
from workbench.pricing import PriceTable, format_cost
from workbench.runtime import Runtime
from workbench.sanitize import literal, one_line
from workbench.sessions.codec import encode

EXIT_FINISHED = 0
EXIT_ERROR = 1
EXIT_NOT_RECORDED = 3
EXIT_ABORTED = 130


RESULT_LINES = 12
"""A result prints at most this many lines (the session file keeps all of it)."""


class EventPrinter:
    """Prints bus events as a compact, readable log."""

    def __init__(
        self, console: Console, prefix: str = "", prices: PriceTable | None = None
    ) -> None:
        self.console = console
        self.prefix = prefix
        """Put before every line (proxy mode: which conversation it belongs to)."""
        self.prices = prices or PriceTable()
        self.replies: list[tuple[str, str, Usage]] = []
        """(provider, model, usage) of every model reply, for the run's cost."""
        self.turn = 0
        self.tool_calls = 0
        self.started: dict[str, float] = {}
        self.raw: dict[str, str] = {}
        """Each call's raw argument string, as the model sent it."""
        self.streamed: dict[str, list[str]] = {}
        """The output lines of each call already printed as they streamed."""

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
                if block.type == "toolCall" and block.raw_arguments is not None:
                    self.raw[block.id] = block.raw_arguments
                elif block.type == "thinking":
                    self.line(("thinking ", "dim italic"), (block.thinking, "dim italic"))
                elif block.type == "text" and block.text:
                    self.line(("assistant ", "bold green"), block.text)
            if message.stop_reason in ("error", "aborted"):
                self.line(
                    (f"model {message.stop_reason}: ", "bold red"), message.error_message or ""
                )
            usage = message.usage
            if message.provider == "acp":  # ACP reports no tokens (a notice says any usage)
                return
            self.replies.append((message.provider, message.model, usage))
            cost = self.prices.cost(message.model, usage, message.provider)
            self.line(
                (f"  tokens {usage.input:,}↑ {usage.output:,}↓", "dim"),
                (f" cached {usage.cache_read:,}" if usage.cache_read else "", "dim"),
                (f" · cost {format_cost(cost)}", "dim"),
            )
        elif isinstance(message, ToolResultMessage):
            style = "red" if message.is_error else "green"
            mark = "✗" if message.is_error else "✓"
            self.line(
                (f"  {mark} result ", style),
                (message.tool_name, "bold"),
                f" [{message.tool_call_id}] ",
            )
            self._result_body(message)

    def _result_body(self, message: ToolResultMessage) -> None:
        rows = message.text.splitlines()
        streamed = self.streamed.pop(message.tool_call_id, [])
        if streamed and rows[: len(streamed)] == streamed:
            self.line(
                ("    │ ", "dim"), (f"({len(streamed)} line(s) streamed above)", "dim italic")
            )
            rows = rows[len(streamed) :]
        images = [c for c in message.content if c.type == "image"]
        for image in images:
            data = image.data.rstrip()
            size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))  # base64
            self.line(
                ("    │ ", "dim"),
                (f"[image: {literal(image.mime_type)}, {size:,} bytes]", "italic"),
            )
        if not rows and not images and not streamed:
            self.line(("    │ ", "dim"), ("(empty result)", "dim italic"))
        for row in rows[:RESULT_LINES]:
            self.line(("    │ ", "dim"), row)
        if len(rows) > RESULT_LINES:
            self.line(("    │ ", "dim"), (f"… {len(rows) - RESULT_LINES} more line(s)", "dim"))

    def on_tool_execution_start(self, event: Any) -> None:
        self.tool_calls += 1
        self.started[event.tool_call_id] = event.timestamp
        raw = self.raw.get(event.tool_call_id)
        if raw is not None and not _is_json_object(raw):
            shown: tuple[str | tuple[str, str], ...] = (
                one_line(raw, 100) or repr(raw),
                ("  (raw: not a JSON object)", "red"),
            )
        else:
            shown = (one_line(json.dumps(event.args, ensure_ascii=False), 100),)
        self.line(
            ("  → ", "yellow"),
            (event.tool_name, "bold yellow"),
            " ",
            *shown,
            (f"  [{event.tool_call_id}]", "dim"),
        )

    def on_tool_arguments(self, event: Any) -> None:
        if event.failed_stage is None:
            return
        error = event.error or ""
        self.line(
            ("    ✗ ", "red"), (f"{event.failed_stage} failed: ", "red"), one_line(error, 110)
        )
        if event.failed_stage == "validate":
            for row in _field_errors(error):
                self.line(("      ", "red"), row)

    def on_tool_execution_update(self, event: Any) -> None:
        """New output lines (`details.lines`, as run_command reports them), else the last line."""
        details = event.partial_result.details
        lines = details.get("lines") if isinstance(details, dict) else None
        if not (isinstance(lines, list) and all(isinstance(x, str) for x in lines)):
            text = result_text(event.partial_result.content)
            lines = [text.splitlines()[-1]] if text.strip() else []
            self.streamed[event.tool_call_id] = []  # a summary line: the result prints in full
        else:
            self.streamed.setdefault(event.tool_call_id, []).extend(lines)
        for row in lines:
            self.line(("    … ", "dim"), (literal(row), "dim"))

    def on_tool_execution_end(self, event: Any) -> None:
        ms = event.timestamp - self.started.pop(event.tool_call_id, event.timestamp)
        status = ("error", "red") if event.is_error else ("done", "green")
        extra = " (injected)" if event.injected else ""
        self.line(
            ("  ■ ", status[1]),
            (event.tool_name, "bold"),
            f" {status[0]}{extra} in {ms:.0f} ms",
            (f"  [{event.tool_call_id}]", "dim"),
        )

    def on_permission_request(self, event: Any) -> None:
        self.line(
            ("  ? ", "magenta"), f"permission asked for {event.tool_name} [{event.tool_call_id}]"
        )

    def on_permission_decision(self, event: Any) -> None:
        who = event.decided_by + (f" ({event.rule} from {event.rule_source})" if event.rule else "")
        reason = f": {event.reason}" if event.reason else ""
        self.line(("  ! ", "magenta"), f"{event.decision} {event.tool_name} by {who}{reason}")

    def on_acp_notice(self, event: Any) -> None:
        for row in event.text.splitlines():
            self.line(("  ~ ", "cyan"), row)

    def on_proxy_notice(self, event: Any) -> None:
        self.line(("  ~ ", "cyan"), event.text)

    def on_acp_call_update(self, event: Any) -> None:
        detail = f": {event.detail}" if event.detail else ""
        self.line(("    · ", "dim"), (f"{event.label}{detail} [{event.tool_call_id}]", "dim"))

    def on_run_limit(self, event: Any) -> None:
        self.line(("■ ", "bold yellow"), (event.text, "bold yellow"))

    def on_mcp_tools_changed(self, event: Any) -> None:
        self.line(("  ~ ", "cyan"), event.text)

    def on_mcp_sampling(self, event: Any) -> None:
        self.line(("  ", "cyan"), event.text)

    def on_agent_end(self, event: Any) -> None:
        tokens_in = sum(u.input for _p, _m, u in self.replies)
        tokens_out = sum(u.output for _p, _m, u in self.replies)
        cost = self.prices.total(self.replies)
        summary = f"{self.prefix}end: {self.turn} turns, {self.tool_calls} tool calls"
        if self.replies:  # an ACP agent reports none: no figures rather than zeros
            summary += f", tokens {tokens_in:,}↑ {tokens_out:,}↓, cost {format_cost(cost)}"

        self.console.rule(Text(summary, style="bold"), style="dim")
        unpriced = sorted({m for p, m, _u in self.replies if self.prices.price_of(m, p) is None})
        if unpriced:
            self.line(
                (
                    f'no price for {", ".join(unpriced)}: add a [prices."MODEL"] table '
                    "to the config file to see the cost",
                    "dim",
                )
            )


def _is_json_object(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _field_errors(error: str) -> list[str]:
    """The `- field: problem` lines of a validation error (up to the blank line)."""
    rows = []
    for row in error.splitlines()[1:]:
        if not row.strip():
            break
        rows.append(row.strip())
    return rows


def _reader_gone(runtime: Runtime) -> Callable[[], None]:
    def stop() -> None:
        # Nobody reads the events any more: stop the run, and keep Python from
        # complaining about the closed pipe at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        runtime.agent.abort("stdout was closed")

    return stop


def exit_code(runtime: Runtime) -> int:
    """0 finished, 1 the model or the run ended in error, 3 finished but the session
    file does not hold the whole run, 4 stopped by --max-turns, 130 aborted."""
    if runtime.turn_limit is not None and runtime.turn_limit.reached:
        return EXIT_MAX_TURNS
    messages = runtime.agent.state.messages
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is None:
        return EXIT_ERROR
    if last.stop_reason == "aborted":
        return EXIT_ABORTED
    if last.stop_reason == "error":
        return EXIT_ERROR
    return recording_exit_code(runtime, EXIT_FINISHED)


def recording_exit_code(runtime: Runtime, code: int) -> int:
    """`code`, or 3 when it is 0 and the session recording had a problem."""
    recorder = runtime.recorder
    return EXIT_NOT_RECORDED if code == EXIT_FINISHED and recorder and recorder.problems else code


def say_recording_problem(text: str) -> None:
    """A recording problem as one line on stderr."""
    print(f"workbench: session {literal(text)}", file=sys.stderr, flush=True)


class JsonLinesPrinter:
    """Writes each bus event as one JSON line, in the session codec's format."""

    def __init__(self, out: IO[bytes], on_closed: Callable[[], None] = lambda: None) -> None:
        self.out = out
        self.on_closed = on_closed
        """Called once if the reader goes away (e.g. `| head`)."""
        self.seq = 0
        self.closed = False

    def __call__(self, event: Any, _signal: Any = None) -> None:
        if self.closed:
            return
        self.seq += 1
        try:
            self.out.write(encode(self.seq, time.time() * 1000.0, event))
            self.out.flush()  # a script reading the pipe sees each event as it happens
        except BrokenPipeError:
            self.closed = True
            self.on_closed()


async def run_headless(
    runtime: Runtime, prompt: str, console: Console | None = None, *, jsonl: bool = False
) -> int:
    """Run one prompt to completion, printing events (readably, or as JSON lines with
    `jsonl`); Ctrl-C aborts the run cleanly."""
    if jsonl:
        runtime.agent.subscribe(JsonLinesPrinter(sys.stdout.buffer, _reader_gone(runtime)))
    else:
        runtime.agent.subscribe(
            EventPrinter(console or Console(highlight=False), prices=runtime.prices)
        )
    if runtime.recorder is not None:
        runtime.recorder.on_problem = say_recording_problem

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
