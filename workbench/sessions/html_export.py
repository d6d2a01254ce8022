"""Export a session as one self-contained HTML page, to share (`--format html`).

The page holds everything in itself: the style and a small script inline, no font,
image, script or request from anywhere (its Content-Security-Policy refuses them, see
`html_assets`). It shows the session's facts (model, workspace, totals, cost), a
timeline of every call with its duration, then each turn: the prompts, the model's
text, and every call with its argument stages (raw, parsed, prepared, validated, and
the arguments a person edited), its permission decision (who decided, which rule,
the reason), its result and how long it took; and the network view (each model
request: status, timings, usage, the body as sent). Every text from the session is
made literal (`sanitize.literal`) and HTML-escaped; a text longer than
`SHOWN_CHARS` is cut, saying how much is left out.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from workbench.agent import AssistantMessage
from workbench.agent.types import text_of
from workbench.pricing import PriceTable, format_cost
from workbench.sanitize import literal
from workbench.sessions.export import session_costs
from workbench.sessions.html_assets import CSS, JS, csp
from workbench.sessions.interventions import INTERVENTION_KINDS, Intervention, InterventionReader
from workbench.sessions.log import of_kinds
from workbench.sessions.reader import Session

SHOWN_CHARS = 64_000
"""Characters of one text shown in the page (a result, a request body)."""

_KINDS = (
    "agent_start",
    "turn_start",
    "turn_end",
    "message_end",
    "tool_arguments",
    "tool_execution_start",
    "permission_decision",
    "tool_execution_end",
    "provider_request",
    "provider_response",
    "hand_call",
    "acp_notice",
    *INTERVENTION_KINDS,
)


def esc(text: Any) -> str:
    """Untrusted text as HTML: unsafe characters made visible, then escaped."""
    return html.escape(literal(str(text)), quote=True)


def _cut(text: str) -> str:
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}\n… {len(text) - SHOWN_CHARS} more characters not shown"


def _pre(text: str) -> str:
    return f"<pre>{esc(_cut(text))}</pre>"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


@dataclass
class Call:
    id: str
    name: str
    raw: str | None = None
    stages: list[tuple[str, str]] = field(default_factory=list)
    decision: Any = None
    result: str | None = None
    is_error: bool = False
    injected: bool = False
    started: float | None = None
    duration_ms: float | None = None
    interventions: list[Intervention] = field(default_factory=list)
    turn: int = 0
    by_hand: bool = False
    """A person called it (outside the model's transcript)."""

    @property
    def outcome(self) -> str:
        if self.decision is not None and self.decision.decision == "deny":
            return "denied"
        if self.result is None:
            return "no result"
        return "error" if self.is_error else "ok"


@dataclass
class Turn:
    number: int
    started: float
    prompts: list[str] = field(default_factory=list)
    thinking: str = ""
    text: str = ""
    ended: str = ""
    calls: list[Call] = field(default_factory=list)
    duration_ms: float | None = None
    usage: Any = None
    notices: list[str] = field(default_factory=list)
    """What an ACP agent said besides messages and calls (its plan, mode, commands)."""


@dataclass
class Page:
    turns: list[Turn] = field(default_factory=list)
    requests: dict[str, list[Any]] = field(default_factory=dict)
    """Per request id: the request event, then its response (when there is one)."""


def read_page(session: Session) -> Page:
    """The session's turns, calls and requests (one pass over the events)."""
    page = Page()
    calls: dict[str, Call] = {}
    pending: list[str] = []
    notices: list[str] = []
    turn: Turn | None = None
    reader = InterventionReader()
    for event in of_kinds(session.events, _KINDS):
        kind = event.type
        for item in reader.feed(event) if kind in INTERVENTION_KINDS else ():
            if item.tool_call_id in calls:
                calls[item.tool_call_id].interventions.append(item)
        if kind == "turn_start":
            turn = Turn(len(page.turns) + 1, event.timestamp, prompts=pending, notices=notices)
            pending, notices = [], []
            page.turns.append(turn)
        elif kind == "turn_end" and turn is not None:
            turn.duration_ms = event.timestamp - turn.started
        elif kind == "message_end":
            turn = _message(page, turn, pending, calls, event)
        elif kind == "hand_call":
            turn = _hand_call(page, turn, calls, event)
        elif kind == "acp_notice":  # before the first turn: the session it opened
            (turn.notices if turn is not None else notices).append(event.text)
        elif kind in ("provider_request", "provider_response"):
            page.requests.setdefault(event.request_id, []).append(event)
        elif kind != "agent_start" and event.tool_call_id in calls:
            _call_event(calls[event.tool_call_id], event)
    return page


def _message(
    page: Page, turn: Turn | None, pending: list[str], calls: dict[str, Call], event: Any
) -> Turn | None:
    message = event.message
    if message.role == "user":
        (turn.prompts if turn is not None and not turn.calls else pending).append(
            text_of(message.content)
        )
    elif isinstance(message, AssistantMessage):
        if turn is None:  # a reply outside a turn (a recording cut short)
            turn = Turn(len(page.turns) + 1, event.timestamp, prompts=list(pending))
            pending.clear()
            page.turns.append(turn)
        for block in message.content:
            if block.type == "thinking":
                turn.thinking += block.thinking
            elif block.type == "text":
                turn.text += block.text
        error = f": {message.error_message}" if message.error_message else ""
        turn.ended = f"{message.stop_reason}{error}"
        turn.usage = message.usage
        for block in message.tool_calls:
            call = Call(block.id, block.name, raw=block.raw_arguments, turn=turn.number)
            if block.raw_arguments is None and message.provider == "acp":
                call.stages.append(("arguments", "not reported by the agent"))
            elif block.raw_arguments is None:
                call.stages.append(("arguments", _json(block.arguments)))
            calls[block.id] = call
            turn.calls.append(call)
    return turn


def _hand_call(page: Page, turn: Turn | None, calls: dict[str, Call], event: Any) -> Turn:
    """A call a person made by hand: shown in the turn it was made after."""
    if turn is None:
        turn = Turn(len(page.turns) + 1, event.timestamp)
        page.turns.append(turn)
    for block in event.message.tool_calls:
        call = Call(block.id, block.name, raw=block.raw_arguments, turn=turn.number, by_hand=True)
        if block.raw_arguments is None:
            call.stages.append(("arguments", _json(block.arguments)))
        calls[block.id] = call
        turn.calls.append(call)
    return turn


def _call_event(call: Call, event: Any) -> None:
    kind = event.type
    if kind == "tool_arguments":
        prefix = "edited, " if event.edited else ""
        for stage in ("parsed", "prepared", "validated"):
            value = getattr(event, stage)
            if value is not None:
                call.stages.append((prefix + stage, _json(value)))
        if event.failed_stage is not None:
            call.stages.append((f"failed at {event.failed_stage}", event.error or ""))
    elif kind == "tool_execution_start":
        call.started = event.timestamp
    elif kind == "permission_decision":
        call.decision = event
        if event.edited_args is not None:
            call.stages.append(("edited by a person", _json(event.edited_args)))
    elif kind == "tool_execution_end":
        call.result = text_of(event.result.content)
        call.is_error = event.is_error
        call.injected = event.injected
        call.duration_ms = event.duration_ms


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _when(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def iter_html(session: Session, prices: PriceTable) -> Iterator[str]:
    """The page in pieces (a turn at a time)."""
    header = session.header
    page = read_page(session)
    costs = session_costs(session.events, prices)
    calls = [c for t in page.turns for c in t.calls]
    failed = sum(1 for c in calls if c.outcome != "ok")
    title = f"Agent Workbench session {session.path.name}"
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
        f"<h1>{esc(session.path.name)}</h1>"
    )
    facts = [
        ("model", f"{header.model.id} ({header.model.provider})"),
        ("recorded", _when(header.created)),
        ("workspace", header.workspace or "–"),
        ("scenario", header.scenario or "–"),
        ("turns", str(len(page.turns))),
        ("calls", str(len(calls))),
        ("calls that failed or were denied", str(failed)),
        ("model requests", str(len(page.requests))),
        ("cost", format_cost(costs["session"])),
    ]
    yield '<section class="facts">' + "".join(
        f"<div><b>{esc(k)}</b>{esc(v)}</div>" for k, v in facts
    )
    yield "</section>"
    if header.system_prompt:
        yield f"<details><summary>system prompt</summary>{_pre(header.system_prompt)}</details>"
    yield from _timeline(calls)
    yield "<h2>Turns</h2>"
    yield (
        '<div class="tools"><button id="expand" type="button">expand all</button>'
        '<button id="collapse" type="button">collapse all</button>'
        '<input id="filter" type="search" placeholder="filter calls by tool" '
        'aria-label="filter calls by tool"><label><input id="only-errors" type="checkbox"> '
        "only failed or denied</label></div>"
    )
    turn_costs = costs["turns"]
    for turn in page.turns:
        cost = turn_costs[turn.number - 1] if turn.number - 1 < len(turn_costs) else None
        yield _turn(turn, cost)
    yield from _network(page)
    yield f"</main><script>{JS}</script></body></html>\n"


def _timeline(calls: list[Call]) -> Iterator[str]:
    yield "<h2>Timeline</h2>"
    if not calls:
        yield '<p class="muted">No tool calls.</p>'
        return
    longest = max((c.duration_ms or 0.0) for c in calls) or 1.0
    yield '<ol class="timeline">'
    for call in calls:
        share = round(100 * (call.duration_ms or 0.0) / longest)
        yield (
            f'<li><span class="muted">turn {call.turn}</span>'
            f'<a href="#call-{esc(call.id)}"><span class="name">{esc(call.name)}</span> '
            f'<span class="id">{esc(call.id)}</span></a>'
            f'<span class="{_css(call.outcome)}">{esc(call.outcome)}</span>'
            f'<span class="muted">{_ms(call.duration_ms)}</span>'
            f'<progress max="100" value="{share}"></progress></li>'
        )
    yield "</ol>"


def _css(outcome: str) -> str:
    return {"ok": "ok", "denied": "denied"}.get(outcome, "error")


def _turn(turn: Turn, cost: float | None) -> str:
    usage = turn.usage
    tokens = f"{usage.input} in / {usage.output} out tokens" if usage is not None else ""
    parts = [
        f'<section class="turn" id="turn-{turn.number}"><header>'
        f"<strong>turn {turn.number}</strong><span>{_ms(turn.duration_ms)}</span>"
        f"<span>{esc(tokens)}</span><span>cost {esc(format_cost(cost))}</span>"
        f"<span>ended: {esc(turn.ended or '–')}</span></header>"
    ]
    parts += [f'<div class="prompt"><h3>prompt</h3>{_pre(p)}</div>' for p in turn.prompts]
    parts += [f'<div class="notice">{_pre(n)}</div>' for n in turn.notices]
    if turn.thinking:
        parts.append(f"<details><summary>thinking</summary>{_pre(turn.thinking)}</details>")
    if turn.text:
        parts.append(f'<div class="say">{esc(_cut(turn.text))}</div>')
    parts += [_call(c) for c in turn.calls]
    parts.append("</section>")
    return "".join(parts)


def _call(call: Call) -> str:
    decision = call.decision
    who = decided(decision)
    stages: list[tuple[str, str]] = []
    for name, value in ([("raw", call.raw)] if call.raw is not None else []) + call.stages:
        if stages and stages[-1][1] == value:  # a stage that changed nothing shares a row
            stages[-1] = (f"{stages[-1][0]} = {name}", value)
        else:
            stages.append((name, value))
    rows = "".join(f"<dt>{esc(name)}</dt><dd>{_pre(value)}</dd>" for name, value in stages)
    rows += f"<dt>decision</dt><dd>{esc(who)}"
    if decision is not None and decision.reason:
        rows += f"<br>reason: {esc(decision.reason)}"
    if decision is not None and decision.waited_ms:
        rows += f"<br>waited {_ms(decision.waited_ms)}"
    rows += "</dd>"
    rows += "".join(f"<dt>person</dt><dd>{esc(i.describe())}</dd>" for i in call.interventions)
    result = "(none recorded)" if call.result is None else call.result
    marks = (" (error)" if call.is_error else "") + (
        " (injected by a person)" if call.injected else ""
    )
    rows += f"<dt>result{esc(marks)}</dt><dd>{_pre(result)}</dd>"
    if call.by_hand:
        rows = "<dt>called</dt><dd>by hand, by a person (the model never saw it)</dd>" + rows
    # What a reader looks for first is open: calls that failed, were denied, or that a
    # person changed.
    opened = " open" if call.outcome != "ok" or call.interventions else ""
    return (
        f'<details class="call"{opened} id="call-{esc(call.id)}" data-name="{esc(call.name)}" '
        f'data-outcome="{esc(call.outcome)}"><summary><span class="name">{esc(call.name)}</span>'
        f'<span class="tag {_css(call.outcome)}">{esc(call.outcome)}</span>'
        f'<span class="muted">{esc(who)}</span><span class="muted">{_ms(call.duration_ms)}</span>'
        f'<span class="id">{esc(call.id)}</span></summary><dl class="stages">{rows}</dl></details>'
    )


_VERB = {"allow": "allowed", "deny": "denied"}


def decided(decision: Any) -> str:
    """Who decided, in words: "allowed by rule read_file (default)", "denied by the user"."""
    if decision is None:
        return "no permission decision"
    verb = _VERB.get(decision.decision, decision.decision)
    rule = decision.rule or ""
    source = f" ({decision.rule_source})" if decision.rule_source else ""
    by = {
        "user": "by the user",
        "rule": f"by rule {rule}{source}",
        "session": f"by a session answer {rule}",
        "policy": f"by the policy{source}",
        "abort": "by an abort while it waited",
        "recording": f"as recorded, by {rule}",
    }.get(decision.decided_by, f"by {decision.decided_by}")
    return f"{verb} {by}"


def _network(page: Page) -> Iterator[str]:
    yield "<h2>Network</h2>"
    if not page.requests:
        yield '<p class="muted">No model requests were recorded.</p>'
        return
    yield (
        '<div class="table"><table><thead><tr><th>request</th><th>model</th><th>status</th>'
        "<th>first token</th><th>total</th><th>tokens</th><th>finish</th></tr></thead><tbody>"
    )
    for request_id, events in page.requests.items():
        request = next((e for e in events if e.type == "provider_request"), None)
        response = next((e for e in events if e.type == "provider_response"), None)
        model = request.model if request is not None else "?"
        where = f" at {request.url}" if request is not None and request.url else ""
        simulated = (
            " (simulated: nothing was sent)" if request is not None and request.simulated else ""
        )
        status = "no response"
        if response is not None:
            status = str(response.status) if response.status is not None else "–"
            if response.error:
                status += f" error: {response.error}"
            if response.aborted:
                status += " (aborted)"
        usage = response.usage if response is not None else None
        tokens = f"{usage.input} / {usage.output}" if usage is not None else "–"
        yield (
            f"<tr><td>{esc(request_id)}</td><td>{esc(model + where + simulated)}</td>"
            f"<td>{esc(status)}</td><td>{_ms(response.ttft_ms if response else None)}</td>"
            f"<td>{_ms(response.total_ms if response else None)}</td><td>{esc(tokens)}</td>"
            f"<td>{esc((response.finish_reason if response else None) or '–')}</td></tr>"
        )
        if request is not None:
            yield (
                f'<tr><td colspan="7"><details><summary>request body</summary>'
                f"{_pre(_json(request.body))}</details></td></tr>"
            )
    yield "</tbody></table></div>"
