"""Export a session: a readable Markdown transcript, or the normalized messages as JSON.

The Markdown is for people (a bug report, a review): each turn's messages, and for
every tool call its arguments, who allowed it and its result. Untrusted text goes
through `sanitize.literal` (so a transcript `cat` to a terminal runs no escapes),
and code blocks get a fence longer than any backtick run inside them. The JSON is
for programs: the header's facts and every message exactly as the agent held it.
"""

from __future__ import annotations

import json
import re
from collections import deque
from datetime import datetime
from typing import Any, Literal

from workbench.agent import AssistantMessage, ToolCall, ToolResultMessage
from workbench.agent.types import text_of
from workbench.pricing import BUILTIN_AS_OF, PriceTable, add_costs, format_cost
from workbench.sanitize import literal
from workbench.sessions.history import messages_of
from workbench.sessions.reader import Session

Format = Literal["md", "json"]


def export(session: Session, fmt: Format, prices: PriceTable | None = None) -> str:
    """The session as Markdown (`md`) or JSON (`json`), with costs from `prices`."""
    prices = prices or PriceTable()
    return to_markdown(session, prices) if fmt == "md" else to_json(session, prices)


def session_costs(events: list[Any], prices: PriceTable) -> dict[str, Any]:
    """Cost of each turn and each run and of the whole session (None: unknown)."""
    turns: list[float | None] = []
    runs: list[float | None] = []
    for event in events:
        if event.type == "agent_start":
            runs.append(0.0)
        elif event.type == "turn_start":
            turns.append(0.0)
        elif event.type == "message_end" and isinstance(event.message, AssistantMessage):
            m = event.message
            cost = prices.cost(m.model, m.usage, m.provider)
            if turns:
                turns[-1] = add_costs(turns[-1], cost)
            if runs:
                runs[-1] = add_costs(runs[-1], cost)
    session: float | None = 0.0
    for cost in runs:
        session = add_costs(session, cost)
    return {"currency": "USD", "session": session, "runs": runs, "turns": turns,
            "builtin_prices_as_of": BUILTIN_AS_OF}


def to_json(session: Session, prices: PriceTable | None = None) -> str:
    header = session.header
    data = {
        "format": "agent-workbench-transcript",
        "session": session.path.name,
        "model": header.model.model_dump(mode="json"),
        "workspace": header.workspace,
        "scenario": header.scenario,
        "created": header.created,
        "parent": header.parent.model_dump(mode="json") if header.parent else None,
        "system_prompt": header.system_prompt,
        "tools": [t.model_dump(mode="json") for t in header.tools],
        "messages": [m.model_dump(mode="json") for m in messages_of(session.events)],
        "cost": session_costs(session.events, prices or PriceTable()),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_markdown(session: Session, prices: PriceTable | None = None) -> str:
    prices = prices or PriceTable()
    costs = session_costs(session.events, prices)
    header = session.header
    out: list[str] = [f"# Session {literal(session.path.name)}", ""]
    created = datetime.fromtimestamp(header.created / 1000.0).strftime("%Y-%m-%d %H:%M:%S")
    model = header.model
    out.append(
        f"- Model: `{literal(model.id)}` ({literal(model.provider)}"
        + (f", {literal(model.base_url)})" if model.base_url else ")")
    )
    out.append(f"- Workspace: `{literal(header.workspace)}`")
    if header.scenario:
        out.append(f"- Scenario: {literal(header.scenario)}")
    out.append(
        f"- Recorded: {created} with workbench {literal(header.workbench_version)}, "
        f"{len(session.events)} events"
    )
    if header.parent:
        out.append(f"- Forked from `{literal(header.parent.path)}` after turn {header.parent.turn}")
    if header.tools:
        out.append("- Tools: " + ", ".join(f"`{literal(t.name)}`" for t in header.tools))
    by_run = ", ".join(format_cost(c) for c in costs["runs"])
    out.append(
        f"- Cost: {format_cost(costs['session'])}"
        + (f" (runs: {by_run})" if len(costs["runs"]) > 1 else "")
        + f"; built-in prices as of {BUILTIN_AS_OF}"
    )
    if session.torn:
        out.append("- The recording was cut off (its last line was incomplete).")
    if header.system_prompt:
        out += ["", "## System prompt", "", *_quote(header.system_prompt)]
    out += _body(session.events, prices)
    return "\n".join(out).rstrip() + "\n"


def _body(events: list[Any], prices: PriceTable) -> list[str]:
    results: dict[str, deque[ToolResultMessage]] = {}
    decisions: dict[str, Any] = {}
    for event in events:
        if event.type == "message_end" and isinstance(event.message, ToolResultMessage):
            results.setdefault(event.message.tool_call_id, deque()).append(event.message)
        elif event.type == "permission_decision":
            decisions[event.tool_call_id] = event
    out: list[str] = []
    turn = 0
    for event in events:
        if event.type == "turn_start":
            turn += 1
            out += ["", f"## Turn {turn}"]
        elif event.type == "message_end":
            message = event.message
            if message.role == "user":
                out += ["", "**User**", "", literal(text_of(message.content))]
            elif isinstance(message, AssistantMessage):
                out += _assistant(message, results, decisions, prices)
    return out


def _assistant(
    message: AssistantMessage,
    results: dict[str, deque[ToolResultMessage]],
    decisions: dict[str, Any],
    prices: PriceTable,
) -> list[str]:
    u = message.usage
    cost = format_cost(prices.cost(message.model, u, message.provider))
    out = [
        "",
        f"**Assistant** ({literal(message.model or 'model')}, stop: {message.stop_reason}; "
        f"tokens {u.input:,} in, {u.cache_read:,} cached, {u.output:,} out; cost {cost})",
    ]
    for block in message.content:
        if block.type == "thinking":
            out += ["", "*Thinking:*", "", *_quote(block.thinking)]
        elif block.type == "text" and block.text:
            out += ["", literal(block.text)]
        elif isinstance(block, ToolCall):
            queue = results.get(block.id)
            out += _call(block, queue.popleft() if queue else None, decisions.get(block.id))
    if message.stop_reason in ("error", "aborted"):
        out += ["", f"*Model {message.stop_reason}: {literal(message.error_message or '')}*"]
    return out


def _call(call: ToolCall, result: ToolResultMessage | None, decision: Any) -> list[str]:
    out = ["", f"### Tool call `{literal(call.name)}` ({literal(call.id)})"]
    arguments = json.dumps(call.arguments, indent=2, ensure_ascii=False)
    raw = call.raw_arguments
    if raw is not None and _normal(raw) != _normal(arguments):
        out += _fenced(raw, "text", "Arguments, as the model sent them (not a JSON object):")
    else:
        out += _fenced(arguments, "json", "Arguments:")
    if decision is not None:
        who = f"by {decision.decided_by}" + (
            f", rule `{literal(decision.rule)}`" if decision.rule else ""
        )
        line = f"Permission: **{decision.decision}** ({who})"
        if decision.reason:
            line += f": {literal(decision.reason)}"
        out += ["", line]
    if result is None:
        out += ["", "Result: *none recorded*"]
    else:
        label = "error" if result.is_error else "ok"
        extra = ", injected by a person" if result.injected else ""
        out += ["", f"Result ({label}{extra}):"]
        out += _fenced(result.text or "(no text)", "text")
    return out


def _normal(text: str) -> str:
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text


def _fenced(text: str, lang: str, title: str | None = None) -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    lines = [] if title is None else ["", title]
    return lines + ["", f"{fence}{lang}", literal(text), fence]


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in literal(text).splitlines()]
