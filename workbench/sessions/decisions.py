"""What a recording shows was decided for each call, and with which arguments.

A re-run reproduces what ran: a call that is the same as recorded (same tool, same
validated arguments) gets the decision the recording shows, whoever made it (a
person in the dialog, a rule, `--approve all`), with the recorded denial reason. This
module reads those decisions back; `workbench.rerun_hooks` applies them.

Calls are keyed by id and occurrence: a model may reuse an id in a later turn, and
each `tool_execution_end` closes one occurrence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DECISION_KINDS = ("tool_arguments", "permission_decision", "tool_execution_end")
"""The event types decisions are read from."""


@dataclass(frozen=True)
class RecordedDecision:
    decision: str
    """"allow" or "deny"."""
    decided_by: str
    rule: str | None = None
    rule_source: str | None = None
    reason: str | None = None
    """For a denial: what the model was told."""
    edited: bool = False
    """The person edited the arguments before allowing (what ran is not what was sent)."""

    def who(self) -> str:
        """Who decided, for people: "the user", "rule read_file (rules.toml:3)"."""
        if self.decided_by == "user":
            return "the user"
        if self.decided_by in ("rule", "session") and self.rule:
            source = f" ({self.rule_source})" if self.rule_source else ""
            return f"{self.decided_by} {self.rule}{source}"
        if self.decided_by == "policy":
            return f"the policy ({self.rule_source})" if self.rule_source else "the policy"
        return self.decided_by


@dataclass
class RecordedCall:
    """One occurrence of a call in the recording."""

    validated: dict[str, Any] | None = None
    """Its arguments as the pipeline validated them then (before an edit made in the
    permission dialog; after one made to arguments that failed, which ran through the
    pipeline again)."""
    decision: RecordedDecision | None = None


def recorded_calls(events: Iterable[Any]) -> dict[str, list[RecordedCall]]:
    """Per call id, its occurrences in order (see the module)."""
    out: dict[str, list[RecordedCall]] = {}
    open_calls: dict[str, RecordedCall] = {}
    for event in events:
        call_id = event.tool_call_id
        call = open_calls.get(call_id)
        if call is None:
            call = open_calls[call_id] = RecordedCall()
        if event.type == "tool_arguments":
            if event.validated is not None:  # a failed attempt's edit is what the hook sees
                call.validated = event.validated
        elif event.type == "permission_decision":
            call.decision = RecordedDecision(
                decision=event.decision,
                decided_by=event.decided_by,
                rule=event.rule,
                rule_source=event.rule_source,
                reason=event.reason,
                edited=event.edited_args is not None,
            )
        else:  # tool_execution_end: this occurrence is over
            out.setdefault(call_id, []).append(open_calls.pop(call_id))
    for call_id, call in open_calls.items():  # the recording ends before their result
        out.setdefault(call_id, []).append(call)
    return out


def approvals_by_a_person(events: Iterable[Any]) -> dict[str, list[RecordedCall]]:
    """The calls a person allowed as the model sent them (not edited), by id; every
    other occurrence is kept as None-decided so the occurrences still line up."""
    out = recorded_calls(events)
    for occurrences in out.values():
        for call in occurrences:
            decision = call.decision
            allowed = (
                decision is not None
                and decision.decided_by == "user"
                and decision.decision == "allow"
                and not decision.edited
            )
            if not allowed or call.validated is None:  # unknown arguments: never the same call
                call.decision = None
    return {k: v for k, v in out.items() if any(c.decision is not None for c in v)}
