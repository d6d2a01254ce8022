"""Export a session: a readable Markdown transcript, or the normalized messages as JSON.

The Markdown is for people (a bug report, a review): each turn's messages, and for
every tool call its arguments (and, when a person edited them, the ones that ran),
who allowed it and its result (and who wrote or cancelled it, when a person did).
Untrusted text goes through `sanitize.literal` (so a transcript `cat` to a terminal
runs no escapes and hides nothing); names (tools, ids, the model, rules) are inline
code on one line with a backtick fence longer than any run inside, so no name can end
its heading or its code span, and code blocks get a fence longer than any backtick run
inside them. The JSON is for programs: the header's facts, every message exactly as
the agent held it (the model's tool calls as sent), and the interventions: each edit,
injected result and cancel, with who made it and the arguments that ran; characters a
terminal would act on (or hide) are written as JSON escapes, which read back as the
same strings. Both are written a piece at a time, so memory stays flat however long
the session is.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from datetime import datetime
from itertools import chain
from typing import Any, Literal

from workbench.agent import AssistantMessage, ToolCall, ToolResultMessage
from workbench.agent.by_hand import is_by_hand
from workbench.agent.types import text_of
from workbench.json_text import escape_chars, normal
from workbench.pricing import BUILTIN_AS_OF, PriceTable, add_costs, format_cost
from workbench.sanitize import UNSAFE, literal
from workbench.sessions.interventions import (
    INTERVENTION_KINDS,
    Intervention,
    InterventionReader,
)
from workbench.sessions.log import of_kinds
from workbench.sessions.reader import Session

Format = Literal["md", "json", "html"]


def export(session: Session, fmt: Format, prices: PriceTable | None = None) -> str:
    """The session as Markdown (`md`) or JSON (`json`), with costs from `prices`."""
    return "".join(iter_export(session, fmt, prices))


def iter_export(session: Session, fmt: Format, prices: PriceTable | None = None) -> Iterator[str]:
    """The export in pieces, in order: write each as it comes, and memory stays flat
    (one turn's tool results at a time, never the whole text)."""
    prices = prices or PriceTable()
    if fmt == "html":
        from workbench.sessions.html_export import iter_html

        return iter_html(session, prices)
    return iter_markdown(session, prices) if fmt == "md" else iter_json(session, prices)


def session_costs(events: Iterable[Any], prices: PriceTable) -> dict[str, Any]:
    """Cost of each turn and each run and of the whole session (None: unknown)."""
    turns: list[float | None] = []
    runs: list[float | None] = []
    for event in of_kinds(events, ("agent_start", "turn_start", "message_end")):
        if event.type == "agent_start":
            runs.append(0.0)
        elif event.type == "turn_start":
            turns.append(0.0)
        elif isinstance(event.message, AssistantMessage):
            m = event.message
            cost = prices.cost(m.model, m.usage, m.provider)
            if turns:
                turns[-1] = add_costs(turns[-1], cost)
            if runs:
                runs[-1] = add_costs(runs[-1], cost)
    session: float | None = 0.0
    for cost in runs:
        session = add_costs(session, cost)
    return {
        "currency": "USD",
        "session": session,
        "runs": runs,
        "turns": turns,
        "builtin_prices_as_of": BUILTIN_AS_OF,
    }


def to_json(session: Session, prices: PriceTable | None = None) -> str:
    return "".join(iter_json(session, prices or PriceTable()))


def iter_json(session: Session, prices: PriceTable) -> Iterator[str]:
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
        "messages": [],
    }
    # The same text as one json.dumps(indent=2) of it all, a message at a time; the
    # interventions (a few, however long the run) follow the messages.
    head = json.dumps(data, indent=2, ensure_ascii=False)
    yield escape_chars(head.removesuffix("[]\n}"), UNSAFE)
    first = True
    reader = InterventionReader()
    changes: list[dict[str, Any]] = []
    mcp: list[dict[str, Any]] = []
    by_hand: list[dict[str, Any]] = []
    kinds = ("message_end", "hand_call", "hand_call_end", *INTERVENTION_KINDS, *MCP_KINDS)
    for event in of_kinds(session.events, kinds):
        if event.type in MCP_KINDS:
            mcp.append(event.model_dump(mode="json"))
            continue
        changes += [
            {k: v for k, v in asdict(i).items() if v is not None} for i in reader.feed(event)
        ]
        if event.type == "hand_call":  # not in the transcript: the model never saw it
            by_hand.append({"called_by": "user", "call": event.message.model_dump(mode="json")})
        elif event.type == "hand_call_end" and by_hand:
            by_hand[-1]["result"] = event.message.model_dump(mode="json")
        if event.type != "message_end":
            continue
        message = json.dumps(event.message.model_dump(mode="json"), indent=2, ensure_ascii=False)
        yield ("[\n" if first else ",\n") + escape_chars(textwrap.indent(message, "    "), UNSAFE)
        first = False
    yield "[]" if first else "\n  ]"
    tail = json.dumps(
        {
            "interventions": changes,
            "calls_by_hand": by_hand,
            **({"mcp_events": mcp} if mcp else {}),
            "cost": session_costs(session.events, prices),
        },
        indent=2,
        ensure_ascii=False,
    )
    yield ",\n" + escape_chars(tail[2:-2], UNSAFE) + "\n}\n"


def to_markdown(session: Session, prices: PriceTable | None = None) -> str:
    return "".join(iter_markdown(session, prices or PriceTable()))


def iter_markdown(session: Session, prices: PriceTable) -> Iterator[str]:
    costs = session_costs(session.events, prices)
    header = session.header
    out: list[str] = [f"# Session {_code(session.path.name)}", ""]
    created = datetime.fromtimestamp(header.created / 1000.0).strftime("%Y-%m-%d %H:%M:%S")
    model = header.model
    out.append(
        f"- Model: {_code(model.id)} ({_code(model.provider)}"
        + (f", {_code(model.base_url)})" if model.base_url else ")")
    )
    out.append(f"- Workspace: {_code(header.workspace)}")
    if header.scenario:
        out.append(f"- Scenario: {_code(header.scenario)}")
    out.append(
        f"- Recorded: {created} with workbench {_code(header.workbench_version)}, "
        f"{len(session.events)} events"
    )
    if header.parent:
        out.append(f"- Forked from {_code(header.parent.path)} after turn {header.parent.turn}")
    if header.tools:
        out.append("- Tools: " + ", ".join(_code(t.name) for t in header.tools))
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
    # The whole text ends in exactly one newline: hold each piece's trailing blank
    # lines back until something follows them.
    held = ""
    for piece in chain([out], _body(session.events, prices)):
        text = "\n".join(piece)
        body = text.rstrip()
        if body:
            yield held + body
            held = text[len(body) :] + "\n"
        else:
            held += text + "\n"
    yield "\n"


def _body(events: Iterable[Any], prices: PriceTable) -> Iterator[list[str]]:
    """The turns, one piece of lines at a time. An assistant message is written once
    its calls' results have arrived (they follow it, within its turn), so only that
    turn's results and decisions are held."""
    results: dict[str, deque[ToolResultMessage]] = {}
    decisions: dict[str, Any] = {}
    waiting: AssistantMessage | None = None
    changed: dict[str, list[Intervention]] = {}
    reader = InterventionReader()
    turn = 0
    notes: list[str] = []
    """What MCP servers did during the held turn (changed tools, sampling), said after it."""
    kinds = (
        "turn_start",
        "message_end",
        "hand_call",
        "hand_call_end",
        "permission_decision",
        *INTERVENTION_KINDS,
        *MCP_KINDS,
        "acp_notice",
    )
    for event in of_kinds(events, kinds):
        for item in reader.feed(event):
            changed.setdefault(item.tool_call_id, []).append(item)
        kind = event.type
        if kind in MCP_KINDS or kind == "acp_notice":  # an ACP agent's plan, mode, ...
            notes.append(event.text)
            if waiting is None:
                yield _notes(notes)
            continue
        if kind == "permission_decision":
            decisions[event.tool_call_id] = event
            continue
        if kind in ("message_end", "hand_call_end") and isinstance(
            event.message, ToolResultMessage
        ):
            results.setdefault(event.message.tool_call_id, deque()).append(event.message)
            continue
        if kind not in ("turn_start", "message_end", "hand_call"):
            continue
        if kind == "message_end" and event.message.role not in ("user", "assistant"):
            continue
        if waiting is not None:
            yield _assistant(waiting, results, decisions, changed, prices)
            yield _notes(notes)
            waiting = None
            results.clear()
            decisions.clear()
            changed.clear()
        if kind == "turn_start":
            turn += 1
            yield ["", f"## Turn {turn}"]
        elif event.message.role == "user":
            yield ["", "**User**", "", literal(text_of(event.message.content))]
        elif isinstance(event.message, AssistantMessage):  # a model's, or a call by hand
            waiting = event.message
    if waiting is not None:
        yield _assistant(waiting, results, decisions, changed, prices)
        yield _notes(notes)


MCP_KINDS = ("mcp_tools_changed", "mcp_sampling")


def _notes(notes: list[str]) -> list[str]:
    """Each note as a quote, a line break kept as one (then none are left)."""
    lines = [
        line
        for note in notes
        for line in ["", "  \n".join(f"> {_line(part)}" for part in note.splitlines() or [""])]
    ]
    notes.clear()
    return lines


def _assistant(
    message: AssistantMessage,
    results: dict[str, deque[ToolResultMessage]],
    decisions: dict[str, Any],
    changed: dict[str, list[Intervention]],
    prices: PriceTable,
) -> list[str]:
    if is_by_hand(message):
        out = [
            "",
            "**Called by you, by hand** (the model did not ask for it and never saw its result)",
        ]
        for call in message.tool_calls:
            queue = results.get(call.id)
            result = queue.popleft() if queue else None
            out += _call(call, result, decisions.get(call.id), changed.get(call.id, []), "you")
        return out
    u = message.usage
    cost = format_cost(prices.cost(message.model, u, message.provider))
    out = [
        "",
        f"**Assistant** ({_code(message.model or 'model')}, stop: {message.stop_reason}; "
        f"tokens {u.input:,} in, {u.cache_read:,} cached, {u.output:,} out; cost {cost})",
    ]
    for block in message.content:
        if block.type == "thinking":
            out += ["", "*Thinking:*", "", *_quote(block.thinking)]
        elif block.type == "text" and block.text:
            out += ["", literal(block.text)]
        elif isinstance(block, ToolCall):
            queue = results.get(block.id)
            result = queue.popleft() if queue else None
            out += _call(
                block,
                result,
                decisions.get(block.id),
                changed.get(block.id, []),
                unreported=message.provider == "acp" and block.raw_arguments is None,
            )
    if message.stop_reason in ("error", "aborted"):
        out += ["", f"*Model {message.stop_reason}:* {_line(message.error_message or '')}"]
    return out


def _call(
    call: ToolCall,
    result: ToolResultMessage | None,
    decision: Any,
    changed: list[Intervention],
    sender: str = "the model",
    *,
    unreported: bool = False,
) -> list[str]:
    """`unreported`: an ACP agent never said the call's input (its `{}` is no input)."""
    out = ["", f"### Tool call {_code(call.name)} ({_code(call.id)})"]
    if unreported:
        out += ["", "Arguments: *not reported by the agent*"]
        return out + _outcome(result, decision, changed)
    arguments = json.dumps(call.arguments, indent=2, ensure_ascii=False)
    raw = call.raw_arguments
    edits = [i for i in changed if i.kind == "edited_arguments"]
    said = f"Arguments, as {sender} sent them" if edits else "Arguments"
    if raw is not None and normal(raw) != normal(arguments):
        out += _fenced(raw, "text", f"Arguments, as {sender} sent them (not a JSON object):")
    else:
        out += _fenced(arguments, "json", f"{said}:")
    if edits:  # what ran: the last edit
        ran = json.dumps(edits[-1].arguments, indent=2, ensure_ascii=False)
        out += _fenced(ran, "json", f"Arguments that ran ({edits[-1].describe()}):")
    return out + _outcome(result, decision, changed)


def _outcome(
    result: ToolResultMessage | None, decision: Any, changed: list[Intervention]
) -> list[str]:
    """A call's permission and result lines."""
    out: list[str] = []
    if decision is not None:
        who = f"by {decision.decided_by}" + (
            f", rule {_code(decision.rule)}" if decision.rule else ""
        )
        line = f"Permission: **{decision.decision}** ({who})"
        if decision.reason:
            line += f": {_line(decision.reason)}"
        out += ["", line]
    if result is None:
        out += ["", "Result: *none recorded*"]
    else:
        label = "error" if result.is_error else "ok"
        injected = next((i for i in changed if i.kind == "injected_result"), None)
        if injected is not None:
            extra = f", {injected.describe()}"
        else:
            extra = ", injected by a person" if result.injected else ""
        cancel = next((i for i in changed if i.kind == "cancelled"), None)
        if cancel is not None:
            extra += f", {cancel.describe()}"
        out += ["", f"Result ({label}{extra}):"]
        out += _fenced(result.text or "(no text)", "text")
        details = result.details
        trace = details.get("traceback") if isinstance(details, dict) else None
        if isinstance(trace, str):
            out += _fenced(trace, "text", "Traceback (the tool's own frames):")
    return out


def _line(text: str) -> str:
    """`text` literal on one line (a line break shown as ⏎), so it starts no Markdown block."""
    return literal(text).replace("\n", "⏎")


def _code(text: str) -> str:
    """`text` as an inline code span on one line, fenced by more backticks than any run in it."""
    shown = _line(text).replace("\t", " ")
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _fenced(text: str, lang: str, title: str | None = None) -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    lines = [] if title is None else ["", title]
    return lines + ["", f"{fence}{lang}", literal(text), fence]


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in literal(text).splitlines()]
