"""Chaining `before_tool_call` / `after_tool_call` hooks (the loop takes one of each).

The app runs the permission gate first and the stepper second:
`chain_before(gate, stepper.before_tool_call)`. The first hook that blocks the
call or answers it with a result ends the chain, so a denied call never pauses
the stepper. After-hooks run in order, each seeing the result as the previous
ones left it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio

from workbench.agent import (
    AbortSignal,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from workbench.agent.config import AfterToolCall, BeforeToolCall, resolve


def chain_before(*hooks: BeforeToolCall | None) -> BeforeToolCall:
    """One `before_tool_call` that runs `hooks` in order (None entries are skipped)."""
    chain = [h for h in hooks if h is not None]

    async def chained(
        ctx: BeforeToolCallContext, signal: AbortSignal | None
    ) -> BeforeToolCallResult | None:
        last: BeforeToolCallResult | None = None
        for hook in chain:
            result: BeforeToolCallResult | None = await resolve(hook(ctx, signal))
            if result is not None:
                if result.block or result.result is not None:
                    return result
                last = result
            if signal is not None and signal.aborted:
                break
        return last

    return chained


_FIELDS = ("content", "details", "is_error", "terminate", "injected")


def chain_after(*hooks: AfterToolCall | None) -> AfterToolCall:
    """One `after_tool_call` that runs `hooks` in order and merges their overrides."""
    chain = [h for h in hooks if h is not None]

    async def chained(
        ctx: AfterToolCallContext, signal: AbortSignal | None
    ) -> AfterToolCallResult | None:
        merged: dict[str, Any] = {}
        for hook in chain:
            result: AfterToolCallResult | None = await resolve(hook(ctx, signal))
            if result is None:
                continue
            merged.update(
                {f: getattr(result, f) for f in _FIELDS if getattr(result, f) is not None}
            )
            ctx = dataclasses.replace(
                ctx,
                result=AgentToolResult(
                    content=merged.get("content", ctx.result.content),
                    details=merged.get("details", ctx.result.details),
                    terminate=merged.get("terminate", ctx.result.terminate),
                ),
                is_error=merged.get("is_error", ctx.is_error),
            )
        return AfterToolCallResult(**merged) if merged else None

    return chained


async def wait_unless_aborted(event: anyio.Event, signal: AbortSignal | None) -> bool:
    """Wait for `event` or for `signal` to abort, whichever comes first.

    Returns True if the event was set (False: the abort ended the wait).
    """
    if signal is None:
        await event.wait()
        return True
    async with anyio.create_task_group() as tg:

        async def on_abort() -> None:
            await signal.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(on_abort)
        await event.wait()
        tg.cancel_scope.cancel()
    return event.is_set()
