"""Re-run, the data side: a recording's runs, and its results compared with today's.

A recorded session holds every reply the model gave. Playing those replies back
through the real loop, with the real tools and today's permission rules, re-runs
the whole tool flow without a model; where a tool's result now differs from the
recording, something changed (the tool, the workspace, the rules). That makes any
session a regression test for its tool flow.

The replies are replayed as recorded whatever the tools answer now, so the model
side never diverges: only results are compared (their content and `is_error`;
`details` often carry timings and are not compared). Runs are replayed in order:
each with its recorded prompts (or as a continue, for a fork), and user messages
that arrived mid-run (steering, follow-ups) are injected after the same reply.
Calls whose recorded result was written by a person (injected) or cut short by an
abort are reported but not compared: nothing real produced them. Calls whose
arguments a person edited run with the edited arguments (what ran then), judged by
today's rules like any other, and their outcome says so.

This module only reads and compares; the run itself is `workbench.session_runs.rerun`.
"""

from __future__ import annotations

import difflib
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.agent import AssistantMessage, ToolResultMessage
from workbench.sessions.log import of_kinds
from workbench.sessions.masks import Masks

Status = Literal["same", "differs", "missing", "extra", "skipped"]


@dataclass
class RecordedRun:
    """One agent run of the recording: what started it and what the model said."""

    prompts: list[Any] = field(default_factory=list)
    """The user messages that started it (none: the run was a continue)."""
    replies: list[AssistantMessage] = field(default_factory=list)
    injected: list[tuple[int, Any]] = field(default_factory=list)
    """(replies before it, user message): steering and follow-ups, in order."""


def recorded_runs(events: Sequence[Any]) -> list[RecordedRun]:
    """Split the events into runs (at each `agent_start`)."""
    runs: list[RecordedRun] = []
    for event in of_kinds(events, ["agent_start", "message_end"]):
        if event.type == "agent_start":
            runs.append(RecordedRun())
        elif event.type == "message_end" and runs:
            message, run = event.message, runs[-1]
            if isinstance(message, AssistantMessage):
                run.replies.append(message)
            elif message.role == "user":
                if run.replies:
                    run.injected.append((len(run.replies), message))
                else:
                    run.prompts.append(message)
    return runs


@dataclass
class CallOutcome:
    """One tool call, then and now."""

    tool_call_id: str
    tool_name: str
    status: Status
    recorded: ToolResultMessage | None = None
    now: ToolResultMessage | None = None
    note: str = ""
    masks: Masks = field(default_factory=Masks)
    divergences: list[str] = field(default_factory=list)
    """What else is not as recorded: the call's arguments, the files it left."""

    def diverged(self, why: Sequence[str]) -> None:
        """Note divergences besides the result (a call that was the same now differs)."""
        if not why:
            return
        self.divergences += why
        if self.status == "same":
            self.status = "differs"

    def diff(self, context: int = 2, limit: int = 40) -> list[str]:
        """What differs: the divergences, then a unified diff of the result text, then
        and now (at most `limit` lines)."""
        before = self.masks.apply(self.recorded.text).splitlines() if self.recorded else []
        after = self.masks.apply(self.now.text).splitlines() if self.now else []
        lines = list(difflib.unified_diff(before, after, "recorded", "now", n=context, lineterm=""))
        lines[:0] = self.divergences
        if self.recorded and self.now and self.recorded.is_error != self.now.is_error:
            lines.insert(0, f"is_error: {self.recorded.is_error} -> {self.now.is_error}")
        if len(lines) > limit:
            lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
        return lines


@dataclass
class RerunReport:
    calls: list[CallOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    workspace: Path | None = None
    workspace_note: str = ""
    """Which files the re-run started from: restored from the recording, or as they were."""
    notes: list[str] = field(default_factory=list)
    """What the re-run did besides the calls (hand edits put back)."""
    files: list[str] = field(default_factory=list)
    """Files that differ from the recording's at the end (one line each)."""

    @property
    def differs(self) -> bool:
        """Anything differs: a result, a call made or missing now, or a file."""
        return bool(self.files) or any(
            c.status in ("differs", "missing", "extra") for c in self.calls
        )

    def count(self, status: Status) -> int:
        return sum(1 for c in self.calls if c.status == status)


def _same(a: ToolResultMessage, b: ToolResultMessage, masks: Masks) -> bool:
    return a.is_error == b.is_error and masks.content(a.content) == masks.content(b.content)


def _not_real(message: ToolResultMessage) -> str:
    """Why a recorded result cannot be compared ("" when it can)."""
    if message.injected:
        return "the recorded result was injected by a person"
    details = message.details
    if message.is_error and (
        message.text.startswith("Operation aborted")
        or (isinstance(details, dict) and details.get("aborted") is True)
    ):
        return "the recorded call was aborted"
    return ""


def compare(
    recorded: Sequence[ToolResultMessage],
    now: Sequence[ToolResultMessage],
    requested: Sequence[str] = (),
    masks: Masks | None = None,
) -> list[CallOutcome]:
    """Match results by call id (and occurrence, for repeated ids), in recorded order.

    Args:
        requested: the ids of every call the recorded model asked for; one of them
            with a result now but none recorded (the recording ends first) is not
            compared, rather than reported as a call made only now.
        masks: volatile text hidden in both results before they are compared.
    """
    masks = masks if masks is not None else Masks()
    unanswered = Counter(requested) - Counter(m.tool_call_id for m in recorded)
    pending: dict[str, deque[ToolResultMessage]] = {}
    for message in now:
        pending.setdefault(message.tool_call_id, deque()).append(message)
    outcomes: list[CallOutcome] = []
    for then in recorded:
        queue = pending.get(then.tool_call_id)
        current = queue.popleft() if queue else None
        why = _not_real(then)
        if current is None:
            status: Status = "skipped" if why else "missing"
        elif why:
            status = "skipped"
        else:
            status = "same" if _same(then, current, masks) else "differs"
        outcomes.append(
            CallOutcome(then.tool_call_id, then.tool_name, status, then, current, why, masks)
        )
    for queue in pending.values():
        for extra in queue:
            if unanswered[extra.tool_call_id] > 0:
                unanswered[extra.tool_call_id] -= 1
                note = "the recording ends before its result"
                outcomes.append(
                    CallOutcome(extra.tool_call_id, extra.tool_name, "skipped", None, extra, note)
                )
            else:
                outcomes.append(
                    CallOutcome(extra.tool_call_id, extra.tool_name, "extra", None, extra)
                )
    return outcomes
