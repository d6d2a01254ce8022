"""What the session library keeps of one session file: its header, how it ended, counts,
tokens, and the text a search looks in.

`Summarizer` builds it from events one at a time. The recorder feeds it every event
it writes and writes what it holds into the file as a summary line after each run
(`sessions.summary_line`), which is what the library reads of a file when it can.
Otherwise `summarize` reads the file through the lazy reader (`read_session`,
`of_kinds`): every line is checked, and only the events a summary needs are decoded
(never the streamed deltas or a tool's progress updates), so a summary costs one
pass and little memory.

The searchable text is capped (`PIECE` characters of each prompt, argument set,
result and reply; `TOTAL` per field): a search finds a session by what it starts
with, not by the far end of a huge tool output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.agent.types import text_of
from workbench.sessions.interventions import INTERVENTION_KINDS, InterventionReader

PIECE = 4_000
"""Characters of each prompt, argument set, result or reply kept for search."""
TOTAL = 200_000
"""Characters kept for search per field of a session."""

OUTCOMES = ("finished", "error", "aborted", "incomplete", "empty", "unreadable")
"""How a session ended: its last run `finished`, ended in a model `error` or was
`aborted`; `incomplete` (no end recorded: still running, or killed); `empty` (a header
and nothing else); `unreadable` (not a session file the reader accepts)."""

KINDS = sorted(
    {"message_end", "tool_execution_start", "tool_execution_end", "agent_end", *INTERVENTION_KINDS}
)
"""The event types a summary reads (beyond counting events and turns)."""
_KIND_SET = frozenset(KINDS)


@dataclass
class ToolCount:
    calls: int = 0
    errors: int = 0


@dataclass
class Summary:
    """One session, as the library indexes it."""

    created: float = 0.0
    """Epoch ms, from the header."""
    model: str = ""
    provider: str = ""
    endpoint: str = ""
    tools: list[str] = field(default_factory=list)
    """The tools the model could call."""
    workspace: str = ""
    scenario: str = ""
    parent: str = ""
    """The parent session file of a fork (as its header names it)."""
    outcome: str = "empty"
    problem: str = ""
    """Why the file is unreadable, or the reader's warnings (a torn last line...)."""
    events: int = 0
    turns: int = 0
    calls: int = 0
    errors: int = 0
    """Calls that failed (an error result, a denial included)."""
    denials: int = 0
    edits: int = 0
    """Calls whose arguments a person edited."""
    injections: int = 0
    """Results a person wrote in place of a tool's."""
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    duration_ms: float = 0.0
    """From the header's time to the last event's."""
    prompt: str = ""
    """The first prompt (one line of it, for a table)."""
    by_tool: dict[str, ToolCount] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    """The searchable text by field: prompts, tools, arguments, results, replies."""


TEXT_FIELDS = ("prompts", "tools", "arguments", "results", "replies")
SEARCHED = ("prompts", "arguments", "results", "replies")
"""The text fields taken from events (the "tools" field is the names of the tools called)."""


class _Text:
    def __init__(self) -> None:
        self.parts: dict[str, list[str]] = {name: [] for name in SEARCHED}
        self.sizes = dict.fromkeys(SEARCHED, 0)

    def add(self, name: str, text: str) -> None:
        room = TOTAL - self.sizes[name]
        if room <= 0 or not text:
            return
        piece = text[: min(PIECE, room)]
        self.parts[name].append(piece)
        self.sizes[name] += len(piece) + 1

    def joined(self) -> dict[str, str]:
        return {name: "\n".join(parts) for name, parts in self.parts.items()}


def tools_text(summary: Summary) -> str:
    """The searchable "tools" field: the names of the tools called."""
    return " ".join(summary.by_tool)[:PIECE]


def summarize(path: Path) -> Summary:
    """The summary of the session at `path`, read from its events.

    Raises:
        SessionError: the file is not a readable session (the caller records that).
    """
    from workbench.sessions.log import EventLog, of_kinds
    from workbench.sessions.reader import read_session

    session = read_session(path)
    summarizer = Summarizer(session.header)
    summarizer.summary.problem = "; ".join(session.warnings)
    log = session.events
    assert isinstance(log, EventLog)
    if len(log):
        summarizer.summary.turns = log.codes.count(log.code("turn_start"))
        for event in of_kinds(log, KINDS):
            summarizer.feed(event)
        summarizer.last_ts = log.stamps[len(log) - 1]
    summarizer.summary.events = len(log)
    return summarizer.finish()


class Summarizer:
    """Builds a session's summary from its events, one at a time: the reader feeds it
    the kinds in `KINDS` (counting events and turns from its own index), the recorder
    every event it writes (`count`, then `feed`)."""

    def __init__(self, header: Any) -> None:
        self.summary = Summary(
            created=header.created,
            model=header.model.id,
            provider=header.model.provider,
            endpoint=header.model.base_url or "",
            tools=[tool.name for tool in header.tools],
            workspace=header.workspace,
            scenario=header.scenario or "",
            parent=header.parent.path if header.parent is not None else "",
        )
        self.text = _Text()
        self.last_ts: float | None = None
        """When the last event was written (epoch ms)."""
        self._interventions = InterventionReader()
        self._stop: str | None = None
        self._ended = False

    def count(self, event: Any, ts: float) -> None:
        """Count one event written at `ts` (the reader counts them from its index)."""
        summary = self.summary
        summary.events += 1
        summary.turns += event.type == "turn_start"
        self.last_ts = float(f"{ts:.3f}")  # as the line holds it
        if event.type in _KIND_SET:
            self.feed(event)

    def feed(self, event: Any) -> None:
        """Take in one event of the kinds in `KINDS`."""
        summary, text = self.summary, self.text
        kind = event.type
        if kind in INTERVENTION_KINDS:
            for item in self._interventions.feed(event):
                summary.edits += item.kind == "edited_arguments"
                summary.injections += item.kind == "injected_result"
        if kind == "message_end":
            message = event.message
            if message.role == "user":
                prompt = text_of(message.content)
                summary.prompt = summary.prompt or prompt.strip()[:PIECE]
                text.add("prompts", prompt)
            elif message.role == "assistant":
                self._stop, self._ended = message.stop_reason, False
                usage = message.usage
                summary.input_tokens += usage.input
                summary.output_tokens += usage.output
                summary.total_tokens += usage.total_tokens or usage.input + usage.output
                text.add("replies", text_of(message.content))
        elif kind == "tool_execution_start":
            summary.calls += 1
            summary.by_tool.setdefault(event.tool_name, ToolCount()).calls += 1
            text.add("arguments", json.dumps(event.args, ensure_ascii=False, default=str))
        elif kind == "tool_execution_end":
            if event.is_error:  # "errors" counts calls that failed, not error events
                summary.errors += 1
                summary.by_tool.setdefault(event.tool_name, ToolCount()).errors += 1
            text.add("results", text_of(event.result.content))
        elif kind == "permission_decision" and event.decision == "deny":
            summary.denials += 1
        elif kind == "agent_end":
            self._ended = True

    def finish(self) -> Summary:
        """The summary of the events so far (the summarizer can go on after)."""
        summary = replace(
            self.summary, by_tool={k: replace(v) for k, v in self.summary.by_tool.items()}
        )
        if summary.events:
            summary.outcome = _outcome(self._stop, self._ended)
            summary.duration_ms = max(0.0, (self.last_ts or 0.0) - summary.created)
        summary.text = self.text.joined()
        summary.text["tools"] = tools_text(summary)
        return summary


def _outcome(stop: str | None, ended: bool) -> str:
    if stop in ("error", "aborted"):
        return stop
    return "finished" if ended else "incomplete"


def as_dict(summary: Summary) -> dict[str, Any]:
    """The summary's fields for a script (no search text)."""
    out = {k: v for k, v in summary.__dict__.items() if k not in ("text", "by_tool")}
    out["by_tool"] = {name: count.__dict__ for name, count in summary.by_tool.items()}
    return out
