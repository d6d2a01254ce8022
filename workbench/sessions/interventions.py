"""What a person changed in a recorded run: edited arguments, injected results, cancels.

A session's transcript holds the model's tool calls as the model sent them; what
actually ran can differ because a person stepped in. This module reads those
interventions back from the events, so an export shows both (and who did it) and
`rerun` runs what ran. Everything is read from events sessions have always held
(permission decisions, pauses and resumes, results), so older files read the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["edited_arguments", "injected_result", "cancelled"]


@dataclass(frozen=True)
class Intervention:
    tool_call_id: str
    kind: Kind
    by: str
    """Who: "the user" (or whoever the permission decision names)."""
    where: str
    """Where or how: "in the permission dialog", "at a pause", "at failed arguments",
    "before it ran", "in place of its error result", "with F8 (this call only)"..."""
    arguments: dict[str, Any] | None = None
    """For an edit: the arguments that ran."""
    text: str | None = None
    """For an injected result: its text."""

    def describe(self) -> str:
        """One line for people: "arguments edited by the user in the permission dialog"."""
        what = {
            "edited_arguments": "arguments edited",
            "injected_result": "result injected",
            "cancelled": "cancelled",
        }[self.kind]
        return f"{what} by {self.by} {self.where}"


INTERVENTION_KINDS = ("permission_decision", "step_paused", "step_resumed", "tool_execution_end")
"""The event types interventions are read from."""


class InterventionReader:
    """Reads interventions from events one at a time (an export streams a session)."""

    def __init__(self) -> None:
        self._pauses: dict[str, Any] = {}

    def feed(self, event: Any) -> list[Intervention]:
        """The interventions `event` completes (usually none)."""
        kind = event.type
        if kind == "permission_decision" and event.edited_args is not None:
            return [
                Intervention(
                    event.tool_call_id,
                    "edited_arguments",
                    _who(event.decided_by),
                    "in the permission dialog",
                    arguments=event.edited_args,
                )
            ]
        if kind == "step_paused":
            self._pauses[event.pause_id] = event
        elif kind == "step_resumed":
            return _from_resume(event, self._pauses.pop(event.pause_id, None))
        elif kind == "tool_execution_end" and _cancelled_by_person(event):
            return [Intervention(event.tool_call_id, "cancelled", "the user", _how(event))]
        return []


def interventions(events: Iterable[Any]) -> list[Intervention]:
    """Every intervention, in the order they happened."""
    reader = InterventionReader()
    return [item for event in events for item in reader.feed(event)]


def edited_arguments(events: Iterable[Any]) -> dict[str, tuple[dict[str, Any], str]]:
    """Per call id: the arguments a person last edited it to, and where."""
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for item in interventions(events):
        if item.kind == "edited_arguments" and item.arguments is not None:
            out[item.tool_call_id] = (item.arguments, item.where)
    return out


def _from_resume(event: Any, pause: Any) -> list[Intervention]:
    if pause is None or pause.tool_call_id is None:
        return []
    call = pause.tool_call_id
    if event.edited_args is not None:
        where = "at failed arguments" if pause.point == "invalid_arguments" else "at a pause"
        return [
            Intervention(call, "edited_arguments", "the user", where, arguments=event.edited_args)
        ]
    if event.action == "inject" and event.injected_result is not None:
        where = "in place of its error result" if pause.point == "after_tool" else "before it ran"
        text = "".join(getattr(c, "text", "") for c in event.injected_result.content)
        return [Intervention(call, "injected_result", "the user", where, text=text)]
    return []


def _who(decided_by: str) -> str:
    return "the user" if decided_by == "user" else decided_by


def _cancelled_by_person(event: Any) -> bool:
    details = event.result.details
    return (
        isinstance(details, dict)
        and details.get("aborted") is True
        and "by the user" in _reason_of(event)
    )


def _reason_of(event: Any) -> str:
    return "".join(getattr(c, "text", "") for c in event.result.content)


def _how(event: Any) -> str:
    """The app's cancel keys name themselves in the abort's reason."""
    reason = _reason_of(event)
    if "(F8)" in reason:
        return "with F8 (this call only)"
    if "(ctrl+c)" in reason:
        return "with ctrl+c (the whole run)"
    return "while it ran"
