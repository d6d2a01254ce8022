"""Positions in a recorded event list: where turns, calls, decisions and errors are.

A position `p` (0..len(events)) means "after folding events[:p]": 0 is the empty
screen, len(events) the final one, and `events[p - 1]` is the event just applied.
Replay's scrubber jumps between the positions these functions find; fork cuts the
history at a turn boundary so the transcript it hands the model is complete.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Any, Literal

from workbench.agent import AssistantMessage, ToolResultMessage
from workbench.sessions.log import EventLog, of_kinds, types_of

MarkKind = Literal["turn", "call", "decision", "error"]


def is_error(event: Any) -> bool:
    """Something went wrong at this event: a failed call, bad arguments, a failed reply."""
    kind = event.type
    if kind == "tool_execution_end":
        return bool(event.is_error)
    if kind == "tool_arguments":
        return event.failed_stage is not None
    if kind == "message_end":
        message = event.message
        return isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted")
    if kind == "provider_response":
        return event.error is not None
    return False


_PREDICATES: dict[MarkKind, Callable[[Any], bool]] = {
    "turn": lambda e: e.type == "turn_start",
    "call": lambda e: e.type == "tool_execution_start",
    "decision": lambda e: e.type == "permission_decision",
    "error": is_error,
}


class Marks:
    """The positions of every kind of mark in one event list (computed once)."""

    def __init__(self, events: Sequence[Any]) -> None:
        self.total = len(events)
        self.positions: dict[MarkKind, list[int]] = {kind: [] for kind in _PREDICATES}
        if isinstance(events, EventLog):  # from what the log noted: nothing to decode
            kinds: dict[str, MarkKind] = {
                "turn_start": "turn",
                "tool_execution_start": "call",
                "permission_decision": "decision",
            }
            errors = self.positions["error"]
            for index, kind in enumerate(events.kinds()):
                mark = kinds.get(kind)
                if mark is not None:
                    self.positions[mark].append(index + 1)
                if events.errors[index]:
                    errors.append(index + 1)
            return
        for index, event in enumerate(events):
            for kind, matches in _PREDICATES.items():
                if matches(event):
                    self.positions[kind].append(index + 1)

    def next(self, kind: MarkKind, position: int) -> int | None:
        """The first `kind` position after `position`, or None."""
        marks = self.positions[kind]
        i = bisect_right(marks, position)
        return marks[i] if i < len(marks) else None

    def previous(self, kind: MarkKind, position: int) -> int | None:
        """The last `kind` position before `position`, or None."""
        marks = self.positions[kind]
        i = bisect_left(marks, position)
        return marks[i - 1] if i > 0 else None

    def turn_at(self, position: int) -> int:
        """How many turns had started by `position` (the fold's `turn`)."""
        return bisect_right(self.positions["turn"], position)


def fork_cut(events: Sequence[Any], turn: int) -> tuple[int, int]:
    """Where to cut the history to continue after `turn`: (events to keep, turn kept).

    The cut falls right after that turn's `turn_end` (and the run's `agent_end` if it
    follows), so every tool call kept has its result. A turn that never ended (the
    recording was cut off) falls back to the last one that did; turn 0 keeps nothing.
    """
    ended = 0
    cut = 0
    kept = 0
    kinds = list(types_of(events))
    for index, kind in enumerate(kinds):
        if kind == "turn_end":
            ended += 1
            if ended > turn:
                break
            cut, kept = index + 1, ended
    if cut and cut < len(kinds) and kinds[cut] == "agent_end":
        cut += 1
    return cut, kept


def messages_of(events: Sequence[Any]) -> list[Any]:
    """The transcript the events produced: every message, in the order it ended."""
    return [e.message for e in of_kinds(events, ["message_end"])]


def first_prompt(events: Sequence[Any]) -> str:
    """The text of the first user message, if any (to prefill a fork at turn 0)."""
    from workbench.agent.types import text_of

    for event in of_kinds(events, ["message_end"]):
        if event.message.role == "user":
            return text_of(event.message.content)
    return ""


def needs_continue(messages: Sequence[Any]) -> bool:
    """Whether the model owes the next reply (the transcript ends in tool results)."""
    return bool(messages) and isinstance(messages[-1], ToolResultMessage)
