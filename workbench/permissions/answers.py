"""A person's answers to permission requests, and the requests waiting for one.

The gate publishes a `PermissionRequestEvent` for each call a rule says to ask about
and keeps a `PendingRequest` until `PermissionGate.decide` gets a `PermissionAnswer`:
allow once, always allow the tool or calls like this one (`always_rule`, optionally
saved to the rules file), deny with a reason, or edit the arguments and allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from workbench.agent import AgentTool
from workbench.agent.clock import now_ms
from workbench.bus_events import DecidedBy
from workbench.permissions.patterns import CallPattern, PatternError, literal_tool
from workbench.permissions.rules import Rule, RuleError, append_rule

AnswerKind = Literal[
    "allow_once", "allow_always_tool", "allow_always_pattern", "deny", "edit_and_allow"
]


class AnswerError(ValueError):
    """`decide` refused an answer; the request stays pending. `str()` says why."""


@dataclass(frozen=True)
class PermissionAnswer:
    """A person's answer to a permission request."""

    kind: AnswerKind
    reason: str | None = None
    """For "deny": why, told to the model."""
    args: dict[str, Any] | None = None
    """For "edit_and_allow": the new arguments (re-validated before the call runs)."""
    pattern: str | None = None
    """For "allow_always_pattern": the compact pattern; default: the request's suggestion."""
    save: bool = False
    """For "allow_always_*": also append the rule to the workspace rules file."""

    @classmethod
    def allow_once(cls) -> PermissionAnswer:
        return cls("allow_once")

    @classmethod
    def always_tool(cls, *, save: bool = False) -> PermissionAnswer:
        return cls("allow_always_tool", save=save)

    @classmethod
    def always_pattern(cls, pattern: str | None = None, *, save: bool = False) -> PermissionAnswer:
        return cls("allow_always_pattern", pattern=pattern, save=save)

    @classmethod
    def deny(cls, reason: str | None = None) -> PermissionAnswer:
        return cls("deny", reason=reason)

    @classmethod
    def edit(cls, args: dict[str, Any]) -> PermissionAnswer:
        return cls("edit_and_allow", args=args)


@dataclass(eq=False)
class PendingRequest:
    """A call waiting for a person's answer."""

    request_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    """The validated arguments, as JSON."""
    judged: dict[str, Any]
    """The arguments as rules judge them (canonical paths; see `PermissionGate.judged_args`)."""
    rule: Rule | None
    """The rule that said "ask" (None: no rule matched at all)."""
    suggested_pattern: str
    """What "always allow calls like this" would add, e.g. `run_command(command="pytest *")`."""
    tool: AgentTool | None = None
    protected: str | None = None
    """The dialog's warning when the call changes a protected path (None: it does not)."""
    started_ms: float = field(default_factory=now_ms)
    answer: PermissionAnswer | None = None
    edited: BaseModel | None = None
    new_rule: Rule | None = None
    """The "always" rule the answer added (or, for an auto-answer, the rule that settled it)."""
    decided_by: DecidedBy = "user"
    answered: anyio.Event = field(default_factory=anyio.Event)


def always_rule(
    req: PendingRequest,
    answer: PermissionAnswer,
    rules_file: Path | None,
    rules_file_display: str | None,
) -> Rule:
    """The rule an "always" answer adds: session-only, or appended to `rules_file`.

    Raises:
        AnswerError: a pattern that does not parse or does not cover the call, or a
            rule that cannot be saved.
    """
    if answer.kind == "allow_always_tool":
        try:
            pattern = CallPattern(literal_tool(req.tool_name))
        except PatternError as exc:
            raise AnswerError(str(exc)) from None
    else:
        try:
            pattern = CallPattern.parse(answer.pattern or req.suggested_pattern)
        except PatternError as exc:
            raise AnswerError(str(exc)) from None
        if not pattern.matches(req.tool_name, req.judged):
            raise AnswerError(f"Pattern {pattern} does not cover this call of {req.tool_name}")
    if not answer.save:
        return Rule(pattern, "allow", "session")
    if rules_file is None:
        raise AnswerError("No rules file to save to; this gate was made without one")
    try:
        return append_rule(rules_file, pattern, "allow", rules_file_display)
    except RuleError as exc:
        raise AnswerError(f"Could not save the rule: {exc}") from None
    except (OSError, UnicodeError) as exc:
        raise AnswerError(f"Could not save the rule to {rules_file}: {exc}") from None
