"""Running one assistant message's tool calls: preflight, execute, finalize.

The shape is pi's `executeToolCalls`: preflight (arguments, `before_tool_call`) runs
in the assistant's order; execution is concurrent in a parallel batch and one at a
time in a sequential one; `tool_execution_end` is emitted as each call finishes;
ToolResultMessages keep the assistant's order. Beyond pi, every call always gets
exactly one result (calls the run never reached are answered "skipped"), and each
call runs under its own abort signal linked to the run's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup

from workbench.agent.abort import AbortController, AbortError, AbortSignal
from workbench.agent.arguments import run_argument_pipeline
from workbench.agent.config import (
    AfterToolCallContext,
    AgentContext,
    AgentLoopConfig,
    ArgumentsFailedContext,
    BeforeToolCallContext,
    ErrorResultContext,
    ToolCallAborts,
    resolve,
)
from workbench.agent.detached import ABANDON_AFTER, Detached, note_abandoned
from workbench.agent.emit import Emit
from workbench.agent.events import (
    MessageEndEvent,
    MessageStartEvent,
    ToolArgumentsEvent,
    ToolExecutionEndEvent,
    ToolExecutionPhaseEvent,
    ToolExecutionStartEvent,
)
from workbench.agent.outcomes import (
    Finalized,
    Prepared,
    ToolBatch,
    aborted_result,
    aborted_text,
    describe,
    error_result,
    exception_result,
    is_aborted,
    overridden,
    result_message,
)
from workbench.agent.output import checked_result
from workbench.agent.result_limits import limit_result
from workbench.agent.tool import AgentToolResult, to_tool_result
from workbench.agent.types import AssistantMessage, ToolCall, ToolResultMessage
from workbench.agent.updates import UpdatePump


class BatchRunner:
    """Runs the tool calls of one assistant message."""

    def __init__(
        self,
        context: AgentContext,
        message: AssistantMessage,
        config: AgentLoopConfig,
        signal: AbortSignal | None,
        emit: Emit,
        tg: TaskGroup | None = None,
    ) -> None:
        self.context = context
        self.message = message
        self.config = config
        self.signal = signal
        self.emit = emit
        self.tg = tg
        """Where helper tasks (parallel calls, update delivery) run; the loop passes
        its run-wide task group so a batch does not pay for one of its own."""
        self.aborts = config.tool_call_aborts or ToolCallAborts()
        # What has been reported so far, so a batch the loop broke off can be salvaged.
        # Keyed by the ToolCall object: models sometimes repeat a call id in a message.
        self.started: set[int] = set()
        self.finalized: dict[int, Finalized] = {}
        self.emitted: list[ToolResultMessage] = []
        self.controllers: dict[int, AbortController] = {}

    # -- the two schedules -------------------------------------------------------

    async def run(self, tool_calls: list[ToolCall]) -> ToolBatch:
        tools = {t.name: t for t in self.context.tools}
        sequential = self.config.tool_execution == "sequential" or any(
            (t := tools.get(c.name)) is not None and t.execution_mode == "sequential"
            for c in tool_calls
        )
        if self.tg is None:
            async with anyio.create_task_group() as tg:
                finalized = await self._schedule(tool_calls, sequential, tg)
        else:
            finalized = await self._schedule(tool_calls, sequential, self.tg)
        messages = [result_message(f) for f in finalized]
        if not sequential:
            for m in messages:
                await self._emit_result_message(m)
        terminate = bool(finalized) and all(f.result.terminate for f in finalized)
        return ToolBatch(messages, terminate)

    async def _schedule(
        self, calls: list[ToolCall], sequential: bool, tg: TaskGroup
    ) -> list[Finalized]:
        if sequential:
            return await self._sequential(calls, tg)
        return await self._parallel(calls, tg)

    async def _sequential(self, calls: list[ToolCall], tg: TaskGroup) -> list[Finalized]:
        out: list[Finalized] = []
        for call in calls:
            if self._run_aborted():
                done = await self.answer_unrun(call, self._skipped_text(), aborted=True)
            else:
                outcome = await self._preflight(call)
                if isinstance(outcome, Prepared):
                    outcome = await self._execute_and_finalize(outcome, tg)
                done = await self._review(outcome)
                await self._end(done)
            out.append(done)
            await self._emit_result_message(result_message(done))
        return out

    async def _parallel(self, calls: list[ToolCall], tg: TaskGroup) -> list[Finalized]:
        slots: list[Finalized | None] = [None] * len(calls)
        prepared: list[tuple[int, Prepared]] = []
        for i, call in enumerate(calls):
            if self._run_aborted():
                slots[i] = await self.answer_unrun(call, self._skipped_text(), aborted=True)
                continue
            outcome = await self._preflight(call)
            if isinstance(outcome, Prepared):
                prepared.append((i, outcome))
            else:
                outcome = await self._review(outcome)
                await self._end(outcome)
                slots[i] = outcome

        async def run_one(i: int, p: Prepared) -> None:
            done = await self._review(await self._execute_and_finalize(p, tg))
            await self._end(done)
            slots[i] = done

        if len(prepared) == 1:  # nothing to overlap with: no task needed
            await run_one(*prepared[0])
        elif prepared:
            await _run_concurrently([run_one(i, p) for i, p in prepared])
        return [s for s in slots if s is not None]

    # -- one call ----------------------------------------------------------------

    async def answer_all(self, text: str, *, aborted: bool = False) -> ToolBatch:
        """Answer every call of the message with an error result without running any."""
        messages = []
        for call in self.message.tool_calls:
            message = result_message(await self.answer_unrun(call, text, aborted=aborted))
            messages.append(message)
            await self._emit_result_message(message)
        return ToolBatch(messages, terminate=False)

    async def salvage(self, text: str) -> list[ToolResultMessage]:
        """After the loop broke off this batch: end the calls left open and answer every
        call that has no result message yet (with its result if it finished, else an
        error result saying `text`). Returns all of the batch's result messages, in order."""
        # Result messages always go out in the calls' order, so the answered calls
        # are the first len(emitted) ones.
        for call in self.message.tool_calls[len(self.emitted) :]:
            done = self.finalized.get(id(call))
            if done is None:
                if id(call) in self.started:
                    done = Finalized(call, error_result(text), True)
                    await self._end(done)
                else:
                    done = await self.answer_unrun(call, text)
            await self._emit_result_message(result_message(done))
        return list(self.emitted)

    async def answer_unrun(self, call: ToolCall, text: str, *, aborted: bool = False) -> Finalized:
        """Start, describe and end a call that will not run; returns its error result."""
        self.started.add(id(call))
        await self.emit(
            ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments)
        )
        await self.emit(
            ToolArgumentsEvent(
                tool_call_id=call.id,
                tool_name=call.name,
                raw=call.raw_arguments,
                parsed=call.arguments,
                error=text,
            )
        )
        done = Finalized(call, (aborted_result if aborted else error_result)(text), True)
        await self._end(done)
        return done

    async def _preflight(self, call: ToolCall) -> Finalized | Prepared:
        # The call's own controller exists before its start is reported, so a listener
        # may abort the call as soon as it sees it.
        controller = self.controllers[id(call)] = self.aborts.open(call.id, self.signal)
        signal = controller.signal
        self.started.add(id(call))
        await self.emit(
            ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments)
        )
        outcome = run_argument_pipeline(call, self.context.tools)
        await self.emit(outcome.event())
        while outcome.error is not None and not signal.aborted:
            edit = await self._arguments_failed(call, outcome, signal)
            if edit is None:
                break
            edited = call.model_copy(update={"arguments": edit, "raw_arguments": json.dumps(edit)})
            outcome = run_argument_pipeline(edited, self.context.tools)
            await self.emit(outcome.event(edited=True))
        if outcome.error is not None:
            return Finalized(call, error_result(str(outcome.error)), True)
        if signal.aborted:  # e.g. aborted from its start event: not worth asking the hook
            return Finalized(call, aborted_result(aborted_text(signal)), True)
        assert outcome.tool is not None and outcome.validated is not None
        args = outcome.validated
        hook = self.config.before_tool_call
        if hook is not None:
            ctx = BeforeToolCallContext(self.message, call, args, self.context, outcome.tool)
            try:
                before = await resolve(hook(ctx, signal))
            except Exception as exc:  # noqa: BLE001 - a failing hook is an error result
                return Finalized(
                    call, error_result(f"before_tool_call failed: {describe(exc)}"), True
                )
            args = ctx.args
            if signal.aborted:
                return Finalized(call, aborted_result(aborted_text(signal)), True)
            if before is not None and before.block:
                result = error_result(before.reason or "Tool execution was blocked")
                result.terminate = before.terminate
                return Finalized(call, result, True)
            if before is not None and before.result is not None:
                return Finalized(call, before.result, before.is_error, injected=True)
        if signal.aborted:
            return Finalized(call, aborted_result(aborted_text(signal)), True)
        return Prepared(call, outcome.tool, args, signal)

    async def _arguments_failed(
        self, call: ToolCall, outcome: Any, signal: AbortSignal
    ) -> dict[str, Any] | None:
        hook = self.config.on_arguments_failed
        if hook is None:
            return None
        error = outcome.error
        args = outcome.prepared if outcome.prepared is not None else outcome.parsed
        ctx = ArgumentsFailedContext(call, error.stage, str(error), args, self.context)
        return await resolve(hook(ctx, signal))

    async def _review(self, f: Finalized) -> Finalized:
        """Offer an error result to `on_error_result` before it is final (not an
        aborted call's, nor one a person wrote)."""
        hook = self.config.on_error_result
        if hook is None or not f.is_error or f.injected or is_aborted(f.result):
            return f
        controller = self.controllers.get(id(f.tool_call))
        signal = controller.signal if controller is not None else self.signal
        if signal is not None and signal.aborted:
            return f
        try:
            override = await resolve(
                hook(ErrorResultContext(f.tool_call, f.result, self.context), signal)
            )
        except Exception as exc:  # noqa: BLE001 - a failing hook is an error result
            return Finalized(
                f.tool_call, error_result(f"on_error_result failed: {describe(exc)}"), True
            )
        return f if override is None else overridden(f.tool_call, f.result, f.is_error, override)

    async def _execute_and_finalize(self, p: Prepared, tg: TaskGroup) -> Finalized:
        signal = p.signal
        if signal.aborted:
            return Finalized(p.tool_call, aborted_result(aborted_text(signal)), True)
        await self._phase(p.tool_call, "executing")
        if signal.aborted:  # aborted by a listener of the phase event
            return Finalized(p.tool_call, aborted_result(aborted_text(signal)), True)
        result, is_error = await self._execute(p, signal, tg)
        ms = p.duration_ms
        hook = self.config.after_tool_call
        if hook is None:
            return Finalized(p.tool_call, result, is_error, duration_ms=ms)
        await self._phase(p.tool_call, "after_hook")
        ctx = AfterToolCallContext(
            self.message, p.tool_call, p.args, result, is_error, self.context, p.tool
        )
        try:
            after = await resolve(hook(ctx, signal))
        except Exception as exc:  # noqa: BLE001
            failed = error_result(f"after_tool_call failed: {describe(exc)}")
            return Finalized(p.tool_call, failed, True, duration_ms=ms)
        if after is not None:
            return overridden(p.tool_call, result, is_error, after, ms)
        return Finalized(p.tool_call, result, is_error, duration_ms=ms)

    async def _execute(
        self, p: Prepared, signal: AbortSignal, tg: TaskGroup
    ) -> tuple[AgentToolResult, bool]:
        pump = UpdatePump(self.emit, p.tool_call, tg, self.config.redact, self.config.caps)
        grace = self.config.tool_abort_grace
        run = Detached(p.tool.execute, (p.tool_call.id, p.args, signal, pump.push))
        with anyio.CancelScope() as waiting:

            def on_abort(_reason: Any) -> None:
                # The tool has `grace` seconds to stop on its own, then it is cancelled;
                # one that does not even end then (stuck in a thread) is left behind.
                run.scope.deadline = anyio.current_time() + grace
                waiting.deadline = run.scope.deadline + ABANDON_AFTER

            remove = signal.add_listener(on_abort)
            started = time.monotonic()
            try:
                await run.start()
            finally:
                p.duration_ms = (time.monotonic() - started) * 1000.0
                remove()
                if not run.done.is_set():
                    run.scope.cancel()
        await pump.close()
        if not run.done.is_set():
            note_abandoned()
            text = (
                f"{aborted_text(signal)}: tool {p.tool_call.name} did not stop within "
                f"{grace:g}s of the abort signal, nor when cancelled; it was abandoned "
                "(a thread it started may still be running)"
            )
            return aborted_result(text), True
        if run.failure is not None:
            raise run.failure
        if run.scope.cancel_called:  # it ended only when cancelled (or swallowed that)
            text = (
                f"{aborted_text(signal)}: tool {p.tool_call.name} did not stop within "
                f"{grace:g}s of the abort signal and was cancelled"
            )
            return aborted_result(text), True
        if run.error is not None:
            exc = run.error
            if isinstance(exc, AbortError):
                return aborted_result(describe(exc), getattr(exc, "details", None)), True
            return exception_result(exc), True
        return checked_result(p.tool, to_tool_result(run.value))

    async def _phase(self, call: ToolCall, phase: Any) -> None:
        await self.emit(
            ToolExecutionPhaseEvent(tool_call_id=call.id, tool_name=call.name, phase=phase)
        )

    async def _end(self, f: Finalized) -> None:
        f.result = limit_result(f.result, self.config.redact, self.config.caps)
        controller = self.controllers.pop(id(f.tool_call), None)
        if controller is not None:
            self.aborts.close(f.tool_call.id, controller)
        self.finalized[id(f.tool_call)] = f
        await self.emit(
            ToolExecutionEndEvent(
                tool_call_id=f.tool_call.id,
                tool_name=f.tool_call.name,
                result=f.result,
                is_error=f.is_error,
                injected=f.injected,
                duration_ms=f.duration_ms,
            )
        )

    async def _emit_result_message(self, message: ToolResultMessage) -> None:
        self.emitted.append(message)
        await self.emit(MessageStartEvent(message=message))
        await self.emit(MessageEndEvent(message=message))

    def _run_aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def _skipped_text(self) -> str:
        assert self.signal is not None
        return f"{aborted_text(self.signal)}: tool call skipped, it never started"


async def _run_concurrently(calls: list[Coroutine[Any, Any, None]]) -> None:
    """Run a parallel batch's calls at once and wait for all of them, as a task group
    would: the first that raises cancels the rest, and its error is raised once they
    have ended; cancelling the waiter cancels them all. Plain asyncio tasks: an anyio
    task costs several times as much to start, once per call of a wide batch
    (benchmarks/README.md, loop_overhead.py)."""
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(call) for call in calls]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        pending = [t for t in tasks if not t.done()]
        if pending:
            for task in pending:
                task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait(pending)
    # Every task's error is retrieved (asyncio reports one never asked for); the first raises.
    errors = [e for t in tasks if not t.cancelled() and (e := t.exception()) is not None]
    if errors:
        raise errors[0]
