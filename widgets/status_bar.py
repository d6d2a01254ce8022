"""StatusBar: one line with the model, run state, turn, tokens, pending calls and step mode."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from workbench.pricing import format_cost
from workbench.sanitize import literal
from workbench.view.fold import ViewState
from workbench.view.summary import Costs

WIDE_COSTS = 120
"""Below this many columns the status bar shows only the session's cost, at its end."""

RUN_STATE_STYLE = {
    "idle": ("idle", "dim"),
    "streaming": ("streaming", "bold cyan"),
    "running_tools": ("running tools", "bold cyan"),
    "awaiting_approval": ("awaiting approval", "bold magenta"),
    "paused": ("PAUSED", "bold black on yellow"),
    "finished": ("finished", "green"),
    "aborted": ("aborted", "bold #ff8700"),
    "error": ("error", "bold red"),
}


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, model: str, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.model = model
        self.mode = "live"
        self._shown: Text | None = None
        self._last: tuple[ViewState, int, str, Costs | None] | None = None

    def on_resize(self) -> None:
        if self._last is not None:  # the costs take more or less room
            state, queued, extra, costs = self._last
            self.sync(state, queued=queued, extra=extra, costs=costs)

    def sync(
        self, state: ViewState, *, queued: int = 0, extra: str = "", costs: Costs | None = None
    ) -> None:
        self._last = (state, queued, extra, costs)
        label, style = RUN_STATE_STYLE[state.run_state]
        text = Text()
        if self.mode != "live":
            text.append(f"{self.mode} ", style="bold reverse")
            text.append(" ")
        text.append("● ", style=style)
        text.append(label, style=style)
        text.append("  │  ", style="dim")
        text.append(literal(self.model), style="bold")
        text.append("  │  ", style="dim")
        text.append(f"turn {state.turn}")
        text.append("  │  ", style="dim")
        text.append(tokens_text(state))
        wide = self.size.width >= WIDE_COSTS
        if costs is not None and not wide:  # narrow: next to the tokens, before the rest
            text.append("  │  ", style="dim")
            text.append(f"cost {format_cost(costs.session)}")
        if costs is not None and wide:
            text.append("  │  ", style="dim")
            text.append(
                f"cost {format_cost(costs.turn)} turn · {format_cost(costs.run)} run · "
                f"{format_cost(costs.session)} session"
            )
        pending = len(state.pending_calls)
        if pending:
            text.append("  │  ", style="dim")
            text.append(f"{pending} pending", style="cyan")
        if queued:
            text.append("  │  ", style="dim")
            text.append(f"{queued} queued", style="yellow")
        text.append("  │  ", style="dim")
        if state.step_mode:
            text.append("step ON", style="bold yellow")
        else:
            text.append("step off", style="dim")
        if state.breakpoints:
            text.append(f"  {len(state.breakpoints)} bp", style="yellow")
        if extra:  # something needs a look, e.g. an MCP server that failed
            text.append("  │  ", style="dim")
            text.append(literal(extra), style="bold red")
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)  # one line, always


def tokens_text(state: ViewState) -> str:
    """`tokens 1,234↑ 56↓`; `tokens unknown` when no reply carried usage, and `+?` after
    the counts when some did not (a server that sends none is not free)."""
    if state.replies_without_usage and not (state.input_tokens or state.output_tokens):
        return "tokens unknown"
    counts = f"tokens {state.input_tokens:,}↑ {state.output_tokens:,}↓"
    return counts + (" +?" if state.replies_without_usage else "")


def mcp_alert(hub: object) -> str:
    """`MCP toolbox exited (F7)` when a server failed or exited; "" when all are fine."""
    failed = getattr(hub, "failed", None) or []
    if not failed:
        return ""
    names = ", ".join(c.name for c in failed[:2]) + (" …" if len(failed) > 2 else "")
    what = "exited" if all(c.status == "exited" for c in failed) else "failed"
    return f"MCP {names} {what} (F7)"
