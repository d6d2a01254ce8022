"""An ACP agent's permission requests, judged by the workbench's gate and stepper.

The loop sees every ACP tool call. Its `before_tool_call` (`AcpHook`) waits until the
agent either asks about the call (`session/request_permission`) or runs it without
asking (its status leaves "pending"). Asked, the call goes through the gate and the
stepper exactly as a native call does, and the agent is answered with one of its
own options: an allow is always answered with the agent's "allow once" when it
offers one, so the agent asks again next time and the workbench's rules stay the
judge (an "always" given here becomes a rule of this session, not of the agent's).
A denial is answered with "reject once"; an abort with the `cancelled` outcome.

Not asked, the call cannot be stopped: the hook lets the loop follow it and says so
in the call's history, naming the rule that would have denied it, if one would.

`execute` of an ACP tool waits for the agent's report of the call's end, passing
each content change on as a live update.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.acp.calls import AcpCall
from workbench.agent import (
    AbortSignal,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
)
from workbench.agent.abort import AbortError
from workbench.agent.arguments import ArgumentsError, prepare_arguments, validate_arguments
from workbench.agent.config import BeforeToolCall, resolve
from workbench.permissions.hooks import wait_unless_aborted

if TYPE_CHECKING:
    from workbench.acp.run import AcpRun

EDIT_REFUSED = (
    "Permission denied: an ACP agent runs its own arguments, and the edited ones could "
    "not be passed on, so the call was rejected"
)
NO_END = "The agent's turn ended without reporting this call's end"
NO_CONTENT = "(the agent reported no content for this call)"
"""A finished call's result when the agent sent no content (Gemini CLI keeps a command's
output for its model): an empty result would read as output that was empty."""
NEVER_RAN = "Not run: the agent's prompt ended before it asked about or ran this call"


@dataclass
class PermissionAsk:
    """One `session/request_permission` waiting for its answer."""

    call: AcpCall
    options: list[dict[str, Any]]
    answer: asyncio.Future[dict[str, Any]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def option(self, *kinds: str) -> str | None:
        """The id of the agent's first option of the first of `kinds` it offers."""
        for kind in kinds:
            for option in self.options:
                if option.get("kind") == kind:
                    return str(option.get("optionId"))
        return None

    def select(self, *kinds: str) -> None:
        """Answer with the agent's option of the first of `kinds` it offers (cancelled
        when it offers none of them: the request is never left unanswered)."""
        option = self.option(*kinds)
        if option is None:
            self.cancel()
        elif not self.answer.done():
            self.answer.set_result({"outcome": "selected", "optionId": option})

    def cancel(self) -> None:
        if not self.answer.done():
            self.answer.set_result({"outcome": "cancelled"})

    @property
    def answered(self) -> bool:
        return self.answer.done()


class AcpHook:
    """The loop's `before_tool_call` for ACP calls (see the module docstring)."""

    def __init__(self, run: AcpRun, judge: BeforeToolCall) -> None:
        self.run = run
        self.judge = judge
        """The gate, then the stepper (`chain_before`)."""

    async def __call__(
        self, ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> BeforeToolCallResult | None:
        call = self.run.calls.get(ctx.tool_call.id)
        if call is None:  # not the agent's: nothing to wait for
            return await resolve(self.judge(ctx, signal))
        while call.asked is None and call.status == "pending" and not self.run.turn_over:
            if not await wait_unless_aborted(call.changed, signal):
                return BeforeToolCallResult(block=True, reason="Operation aborted")
        ask: PermissionAsk | None = call.asked
        call.judged, call.context = True, ctx
        if ask is None and call.status == "pending":  # the prompt ended first
            return BeforeToolCallResult(block=True, reason=NEVER_RAN)
        if ask is None:
            await self._not_asked(ctx, call)
            return None
        return await self.answer(ctx, call, ask, signal)

    async def answer(
        self,
        ctx: BeforeToolCallContext,
        call: AcpCall,
        ask: PermissionAsk,
        signal: AbortSignal | None,
    ) -> BeforeToolCallResult | None:
        """Judge the call the agent asked about (gate, then stepper) and tell the agent."""
        asked_args = call.arguments
        if asked_args != ctx.args.model_dump(mode="json"):
            tool = ctx.tool
            try:  # the request's raw input is what the agent will run: judge that
                if tool is not None and isinstance(asked_args, dict):
                    ctx.args = validate_arguments(tool, prepare_arguments(tool, asked_args))
            except ArgumentsError:
                pass
            await self.run.note(call, "agent: raw input when it asked", str(asked_args)[:200])
        judged = ctx.args.model_dump(mode="json")
        result = await resolve(self.judge(ctx, signal))
        if signal is not None and signal.aborted:
            ask.cancel()
            return result or BeforeToolCallResult(block=True, reason="Operation aborted")
        if result is not None and (result.block or result.result is not None):
            ask.select("reject_once", "reject_always")
            return result
        if ctx.args.model_dump(mode="json") != judged:
            ask.select("reject_once", "reject_always")
            return BeforeToolCallResult(block=True, reason=EDIT_REFUSED)
        ask.select("allow_once", "allow_always")
        call.allowed = True
        return result

    async def _not_asked(self, ctx: BeforeToolCallContext, call: AcpCall) -> None:
        gate = self.run.runtime.gate
        detail = f"the agent reported it {call.status} without asking the client"
        if gate is not None:
            args = ctx.args.model_dump(mode="json")
            try:
                rule, action, _ = gate.judge(call.name, gate.judged_args(ctx.tool, args))
            except OSError:
                rule, action = None, "ask"
            if action == "deny" and rule is not None:
                detail += f"; rule {rule.text} ({rule.source}) would have denied it"
        await self.run.note(call, "not asked", detail)


async def execute(
    run: AcpRun, call_id: str, signal: AbortSignal | None, on_update: Any
) -> AgentToolResult:
    """Wait for the agent's report of the call's end; its content as it changes."""
    call = run.calls[call_id]
    shown = ""
    while True:
        text = run.render(call)
        if text != shown and text and not call.finished:
            on_update(AgentToolResult(content=[TextContent(text=text)], details=call.details()))
            shown = text
        if signal is not None and signal.aborted:  # what the agent reports after a cancel
            error = AbortError(f"Aborted while the agent ran the call\n{text}".rstrip())
            error.details = call.details()  # type: ignore[attr-defined]
            raise error
        if call.finished or run.turn_over:
            break
        await wait_unless_aborted(call.changed, signal)
    text = run.render(call)
    if call.status == "failed":
        raise AcpCallFailed(text or "The agent reported that the call failed")
    if not call.finished:
        raise AcpCallFailed(NO_END)
    return AgentToolResult(content=[TextContent(text=text or NO_CONTENT)], details=call.details())


class AcpCallFailed(Exception):
    """The agent reported the call as failed (its content is the message)."""


async def answer_late(run: AcpRun, ask: PermissionAsk) -> None:
    """A request about a call the loop already follows as running (the agent reported
    it in progress, then asked: Codex does so for its shell commands). The agent waits
    for the answer, so the call is judged now as if it had asked first: rules, the
    dialog, breakpoints. A call the loop never judged is answered by the rules alone
    (and the policy `--approve all`); anything else is rejected."""
    call = ask.call
    hook = run.agent.before_tool_call
    if isinstance(hook, AcpHook) and call.context is not None and not call.finished:
        await run.note(call, "asked after it was reported running", "judged now")
        await hook.answer(call.context, call, ask, run.agent.signal)
        return
    gate = run.runtime.gate
    action = "ask"
    if gate is not None:
        try:
            tool = run.tools.get(call.name)
            rule, action, _ = gate.judge(call.name, gate.judged_args(tool, call.arguments))
        except OSError:
            action = "deny"
        if action == "ask" and gate.policy == "all":
            action = "allow"
    await run.note(call, "asked after it ran", f"answered by the rules alone: {action}")
    if action == "allow":
        ask.select("allow_once", "allow_always")
    else:
        ask.select("reject_once", "reject_always")
