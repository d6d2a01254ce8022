"""A re-run's `before_tool_call`: what a person did then, done again; what was decided
then, decided again, for the very call that was recorded.

For each call, in order:

1. its validated arguments are compared with the recorded ones; a call that differs
   is a divergence (named in the report) and is judged by the user's own rules only;
2. a person's recorded edit is put back (the arguments that ran then);
3. a call the same as recorded gets the recorded decision (allowed by whoever allowed
   it, or denied with the recorded reason), unless the user's own rules deny it or it
   would change a protected path: then the gate decides, as it would live.

Calls with no recorded decision (their arguments failed then) go to the gate. The
session file never adds a rule: a replayed answer covers that one recorded call.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.agent import BeforeToolCallResult
from workbench.bus_events import PermissionDecisionEvent
from workbench.sessions.decisions import RecordedCall


class RecordedEdits:
    """Puts a person's recorded edits back where they were made: before the call runs,
    or (for arguments that failed) into the pipeline again."""

    def __init__(self, edits: dict[str, tuple[dict[str, Any], str]]) -> None:
        self.edits = edits
        self.retried: set[str] = set()

    def before_tool_call(self, ctx: Any, _signal: Any = None) -> Any:
        from workbench.permissions.edits import InvalidEdit, revalidate

        edit = self.edits.get(ctx.tool_call.id)
        if edit is None:
            return None
        try:
            ctx.args = revalidate(ctx.tool, edit[0])
        except InvalidEdit as exc:
            return BeforeToolCallResult(
                block=True, reason=f"The recorded edit is no longer valid: {exc}"
            )
        return None

    def arguments_failed(self, ctx: Any, _signal: Any = None) -> dict[str, Any] | None:
        call_id = ctx.tool_call.id
        if call_id in self.retried or call_id not in self.edits:
            return None
        self.retried.add(call_id)
        return self.edits[call_id][0]


def _compact(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ReplayedDecisions:
    """The hook described in the module; `divergences` holds, per call id, why the
    call is not the recorded one."""

    def __init__(
        self,
        calls: dict[str, list[RecordedCall]],
        edits: RecordedEdits,
        gate: Any,
        publish: Any,
    ) -> None:
        self.calls = calls
        self.edits = edits
        self.gate = gate
        self.publish = publish
        self.seen: dict[str, int] = {}
        self.divergences: dict[str, list[str]] = {}
        self.replayed: dict[str, str] = {}
        """Per call id: the recorded decision it got, for the report."""

    def _recorded(self, call_id: str) -> RecordedCall | None:
        index = self.seen.get(call_id, 0)
        self.seen[call_id] = index + 1
        occurrences = self.calls.get(call_id, [])
        return occurrences[index] if index < len(occurrences) else None

    async def __call__(self, ctx: Any, signal: Any = None) -> BeforeToolCallResult | None:
        call_id = ctx.tool_call.id
        recorded = self._recorded(call_id)
        now = ctx.args.model_dump(mode="json")
        same = recorded is not None and recorded.validated == now
        if recorded is not None and recorded.validated is not None and not same:
            self.divergences.setdefault(call_id, []).append(
                f"arguments differ from the recording: {_compact(recorded.validated)} -> "
                f"{_compact(now)}; judged by your rules"
            )
        blocked = self.edits.before_tool_call(ctx)
        if blocked is not None:
            return blocked
        decision = recorded.decision if recorded is not None and same else None
        if decision is None or decision.decided_by == "abort" or self._gate_decides(ctx):
            return await self.gate(ctx, signal)
        self.replayed[call_id] = f"{decision.decision} as recorded, by {decision.who()}"
        await self.publish(
            PermissionDecisionEvent(
                tool_call_id=call_id,
                tool_name=ctx.tool_call.name,
                decision="allow" if decision.decision == "allow" else "deny",
                decided_by="recording",
                rule=decision.who(),
                rule_source="the recorded session",
                reason=decision.reason,
            )
        )
        if decision.decision == "allow":
            return None
        return BeforeToolCallResult(block=True, reason=decision.reason or "Permission denied")

    def _gate_decides(self, ctx: Any) -> bool:
        """The user's own rules deny the call, or it would change a protected path."""
        args = ctx.args.model_dump(mode="json")
        try:
            judged = self.gate.judged_args(ctx.tool, args)
        except OSError:  # the tool would refuse the path: the gate says so
            return True
        builtin = ctx.tool is not None and ctx.tool.source == "builtin"
        _rule, action, target = self.gate.judge(ctx.tool_call.name, judged, builtin=builtin)
        return action == "deny" or target is not None
