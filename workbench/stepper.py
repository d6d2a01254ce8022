"""The stepper: pause the run before model requests and tool executions, UI-free.

Pause points and what can pause there:

- before each model request (`wrap_stream_fn`): in step mode;
- before each tool execution (`before_tool_call`): in step mode, or at a
  breakpoint on the tool's name or an argument pattern (`write_file(path="src/**")`,
  the permission rules' syntax);
- when a call's arguments fail the pipeline (`arguments_failed`, the loop's
  `on_arguments_failed`): at `@invalid` (any stage), or at one stage: `@parse`
  (malformed JSON), `@unknown` (no such tool), `@prepare`, `@validate`;
- at every error result before it goes to the model (`error_result`, the loop's
  `on_error_result`): at `@error`. The pause carries the result stopped on.

At a pause, `resume(pause_id, action)` goes on: `step` (pause at the next point;
from a breakpoint this turns step mode on), `continue` (step mode off,
breakpoints kept), `run_to_end` (skip every pause until this run ends),
`edit` (new arguments, re-validated; invalid ones raise and the pause stays; at
failed arguments the whole pipeline runs again on the edit) or `inject` (answer the
call with a written result instead of running it, or replace the error result at
`@error`, marked `injected` in the events and the transcript). An abort while paused ends the
wait at once and the loop winds the run down. Everything is published as
`StepModeEvent`, `StepPausedEvent` and `StepResumedEvent` (with `waited_ms`).

Wiring: `Agent(stream_fn=stepper.wrap_stream_fn(provider),
before_tool_call=chain_before(gate, stepper.before_tool_call))`, then
`stepper.attach(agent)` (the other two hooks and the bus listener).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import Any

from workbench.agent import (
    AbortSignal,
    AfterToolCallResult,
    AgentEndEvent,
    AgentStartEvent,
    AgentToolResult,
    ArgumentsFailedContext,
    AssistantMessage,
    AssistantMessageEvent,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ErrorResultContext,
    LlmContext,
    Model,
    StreamFn,
    StreamOptions,
    TextContent,
)
from workbench.agent.clock import now_ms
from workbench.agent.config import resolve
from workbench.agent.emit import Emit
from workbench.agent.provider_stream import close_stream
from workbench.breakpoints import (
    ERROR,
    INVALID,
    SPECIAL,
    STAGE_BREAKPOINTS,
    Breakpoint,
    StepperError,
    canonical,
)
from workbench.bus_events import StepModeEvent, StepPausedEvent, StepResumedEvent
from workbench.pauses import Pause, Resume, ResumeKind, rerun_pipeline
from workbench.permissions.edits import InvalidEdit, revalidate
from workbench.permissions.hooks import chain_after, chain_before, wait_unless_aborted

NOT_PASSED_ON = (
    "An ACP agent runs its own calls and gives its own model their results: arguments "
    "edited or a result given here would not reach it. Go on, or cancel the run (ctrl+c)."
)

_ids = itertools.count(1)

__all__ = [
    "ERROR",
    "INVALID",
    "SPECIAL",
    "STAGE_BREAKPOINTS",
    "Breakpoint",
    "Pause",
    "Resume",
    "Stepper",
    "StepperError",
    "chain_after",
    "chain_before",
]


class Stepper:
    """Pause points for the loop, answered through `resume`.

    Args:
        publish: puts an event on the bus (the app passes `agent.publish`).
        enabled: start in step mode (pause at every point).
        breakpoints: breakpoint texts to start with.
    """

    def __init__(
        self,
        *,
        publish: Emit | None = None,
        enabled: bool = False,
        breakpoints: Iterable[str] | dict[str, Breakpoint] = (),
    ) -> None:
        """`breakpoints`: texts to parse, or a table (by text) to share with other
        steppers, as the proxy's conversations share one: an edit applies to all."""
        self.publish = publish
        self._enabled = enabled
        self._breakpoints: dict[str, Breakpoint] = {}
        if isinstance(breakpoints, dict):
            self._breakpoints = breakpoints
        else:
            for text in breakpoints:
                bp = Breakpoint.parse(text)
                self._breakpoints[bp.text] = bp
        self._run_to_end = False
        self._pauses: dict[str, Pause] = {}
        self._mode_dirty = False
        self._announced = not (self._breakpoints or enabled)
        """The mode it started with is on the bus (published with the first run, so the
        session records the breakpoints and a fork can keep them)."""

    # -- state -------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """Step mode: pause at every point."""
        return self._enabled

    @property
    def breakpoints(self) -> list[Breakpoint]:
        return list(self._breakpoints.values())

    @property
    def run_to_end(self) -> bool:
        """Every pause is skipped until the current run ends."""
        return self._run_to_end

    @property
    def paused(self) -> Pause | None:
        """The (oldest) pause waiting for `resume`, or None."""
        return next(iter(self._pauses.values()), None)

    @property
    def pauses(self) -> list[Pause]:
        return list(self._pauses.values())

    async def set_enabled(self, enabled: bool) -> None:
        self._enabled = enabled
        await self._publish_mode()

    async def add_breakpoint(self, text: str) -> Breakpoint:
        """Add a breakpoint (raises `StepperError` if it does not parse)."""
        bp = Breakpoint.parse(text)
        self._breakpoints[bp.text] = bp
        await self._publish_mode()
        return bp

    async def remove_breakpoint(self, text: str) -> bool:
        """Remove a breakpoint by its text; False if there was none."""
        key = text.strip() if text.strip() in SPECIAL else canonical(text)
        removed = self._breakpoints.pop(key, None) is not None
        if removed:
            await self._publish_mode()
        return removed

    def end_run(self) -> None:
        """Forget "run to end" (done automatically on agent_start / agent_end via `on_event`)."""
        self._run_to_end = False

    # -- resuming ----------------------------------------------------------------

    def resume(self, pause_id: str, action: Resume | ResumeKind) -> None:
        """Go on from a pause (call it from the event loop the agent runs on).

        Raises:
            StepperError: no such pause, an action that does not apply at this
                point, or edited arguments that fail validation (the message
                lists each field); the run stays paused.
        """
        act = action if isinstance(action, Resume) else Resume(action)
        pause = self._pauses.get(pause_id)
        if pause is None or pause.resumed.is_set():
            raise StepperError(f"No pause {pause_id!r} is waiting (resumed or aborted)")
        if act.kind in ("edit", "inject") and pause.tool is not None and pause.tool.source == "acp":
            raise StepperError(NOT_PASSED_ON)
        if act.kind not in pause.actions:
            raise StepperError(
                f"{act.kind!r} is not possible at a {pause.point} pause "
                f"(possible: {', '.join(pause.actions)})"
            )
        if act.kind == "edit" and pause.point == "invalid_arguments":
            pause.edited = rerun_pipeline(pause, act.args)
        elif act.kind == "edit":
            try:
                pause.edited = revalidate(pause.tool, act.args)
            except InvalidEdit as exc:
                raise StepperError(str(exc)) from None
        elif act.kind == "inject" and act.result is None:
            raise StepperError("inject needs the result text")
        if act.kind == "step" and not self._enabled:
            self._enabled, self._mode_dirty = True, True
        elif act.kind == "continue" and self._enabled:
            self._enabled, self._mode_dirty = False, True
        elif act.kind == "run_to_end":
            self._run_to_end, self._mode_dirty = True, True
        pause.resume = act
        pause.resumed.set()

    # -- pause points ------------------------------------------------------------

    def wrap_stream_fn(self, stream_fn: StreamFn) -> StreamFn:
        """`stream_fn` with a pause before each model request (in step mode)."""

        async def stepped(
            model: Model, context: LlmContext, options: StreamOptions
        ) -> AsyncIterator[AssistantMessageEvent]:
            if self._enabled and not self._run_to_end:
                pause = await self._pause(Pause(_next_id(), "before_model"), options.signal)
                if pause is None:
                    message = AssistantMessage(
                        stop_reason="aborted",
                        error_message="Request was aborted",
                        model=model.id,
                        provider=model.provider,
                    )
                    yield AssistantMessageEvent(type="error", message=message)
                    return
            # Closed here, not left to the garbage collector: an inner stream dropped at
            # its `done` stays suspended, holding its request's copy of the transcript.
            inner = stream_fn(model, context, options)
            try:
                async for event in inner:
                    yield event
            finally:
                await close_stream(inner)

        return stepped

    async def before_tool_call(
        self, ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> BeforeToolCallResult | None:
        """Pause before a validated call runs (step mode or a matching breakpoint)."""
        if self._run_to_end:
            return None
        args = ctx.args.model_dump(mode="json")
        hit = next(
            (
                bp
                for bp in self._breakpoints.values()
                # widened like a deny: `rm *` stops at `rm -rf $HOME` too
                if bp.pattern is not None
                and bp.pattern.matches(ctx.tool_call.name, args, widen=True)
            ),
            None,
        )
        if not self._enabled and hit is None:
            return None
        pause = await self._pause(
            Pause(
                _next_id(),
                "before_tool",
                ctx.tool_call.id,
                ctx.tool_call.name,
                args,
                hit.text if hit else None,
                ctx.tool,
            ),
            signal,
        )
        if pause is None:
            return BeforeToolCallResult(block=True, reason="Operation aborted while paused")
        assert pause.resume is not None
        if pause.edited is not None:
            ctx.args = pause.edited
        if pause.resume.kind == "inject":
            result = AgentToolResult.text(pause.resume.result or "")
            return BeforeToolCallResult(result=result, is_error=pause.resume.is_error)
        return None

    async def error_result(
        self, ctx: ErrorResultContext, signal: AbortSignal | None = None
    ) -> AfterToolCallResult | None:
        """At `@error`: pause at any error result, before the model sees it (the loop's
        `on_error_result`); an inject replaces it."""
        if self._run_to_end or ERROR not in self._breakpoints:
            return None
        call = ctx.tool_call
        pause = await self._pause(
            Pause(_next_id(), "after_tool", call.id, call.name, None, ERROR, result=ctx.result),
            signal,
        )
        if pause is None or pause.resume is None or pause.resume.kind != "inject":
            return None
        return AfterToolCallResult(
            content=[TextContent(text=pause.resume.result or "")],
            is_error=pause.resume.is_error,
            injected=True,
        )

    async def arguments_failed(
        self, ctx: ArgumentsFailedContext, signal: AbortSignal | None = None
    ) -> dict[str, Any] | None:
        """At `@invalid` or the failed stage's own breakpoint: pause (the loop's
        `on_arguments_failed`); an edit goes back through the pipeline."""
        if self._run_to_end:
            return None
        stage_token = STAGE_BREAKPOINTS[ctx.failed_stage]
        hit = next((t for t in (stage_token, INVALID) if t in self._breakpoints), None)
        if hit is None:
            return None
        call = ctx.tool_call
        pause = await self._pause(
            Pause(
                _next_id(),
                "invalid_arguments",
                call.id,
                call.name,
                ctx.args,
                hit,
                failed_stage=ctx.failed_stage,
                tools=ctx.context.tools,
            ),
            signal,
        )
        if pause is None or pause.resume is None or pause.resume.kind != "edit":
            return None
        return pause.resume.args

    def attach(self, agent: Any, *, error_pause: bool = True) -> None:
        """Give `agent` the stepper's hooks for failed arguments and error results
        (without `error_pause`, none for error results), and its bus listener
        (`before_tool_call` and the stream are wired by the caller, who chains them
        with the gate)."""
        agent.on_arguments_failed = self.arguments_failed
        if error_pause:
            agent.on_error_result = self.error_result
        agent.subscribe(self.on_event)

    def on_event(self, event: Any, signal: AbortSignal | None = None) -> Awaitable[Any] | None:
        """Bus listener: "run to end" ends with the run.

        Plain, not async: almost no event needs anything, and the bus awaits only what
        a listener returns, so most events cost a type check, not a coroutine."""
        if isinstance(event, (AgentStartEvent, AgentEndEvent)) and self._run_to_end:
            self._run_to_end = False
            return self._publish_mode()
        if not self._announced and isinstance(event, AgentStartEvent):
            return self._publish_mode()
        return None

    # -- internals ---------------------------------------------------------------

    async def _pause(self, pause: Pause, signal: AbortSignal | None) -> Pause | None:
        """Publish the pause, wait for `resume` or an abort; None when aborted."""
        self._pauses[pause.pause_id] = pause
        try:
            await self._emit(
                StepPausedEvent(
                    pause_id=pause.pause_id,
                    point=pause.point,
                    tool_call_id=pause.tool_call_id,
                    tool_name=pause.tool_name,
                    args=pause.args,
                    breakpoint=pause.breakpoint,
                    failed_stage=pause.failed_stage,
                    result=pause.result,
                )
            )
            await wait_unless_aborted(pause.resumed, signal)
        finally:
            self._pauses.pop(pause.pause_id, None)
        waited = round(now_ms() - pause.started_ms, 3)
        act = pause.resume
        if act is None:
            await self._emit(
                StepResumedEvent(pause_id=pause.pause_id, action="abort", waited_ms=waited)
            )
            return None
        injected = act.kind == "inject"
        await self._emit(
            StepResumedEvent(
                pause_id=pause.pause_id,
                action=act.kind,
                waited_ms=waited,
                edited_args=pause.edited.model_dump(mode="json") if pause.edited else None,
                injected_result=AgentToolResult.text(act.result or "") if injected else None,
                injected_is_error=act.is_error if injected else False,
            )
        )
        if self._mode_dirty:
            await self._publish_mode()
        return pause

    async def _publish_mode(self) -> None:
        self._mode_dirty = False
        self._announced = True
        await self._emit(
            StepModeEvent(
                enabled=self._enabled,
                breakpoints=list(self._breakpoints),
                run_to_end=self._run_to_end,
            )
        )

    async def _emit(self, event: Any) -> None:
        if self.publish is not None:
            await resolve(self.publish(event))


def _next_id() -> str:
    return f"pause-{next(_ids)}"
