"""Where events go: the one type of an event sink, for the loop and for whoever publishes."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

Emit = Callable[[Any], Awaitable[None]]
"""An async sink for events. The loop awaits each emit before going on; the gate, the
stepper and the providers publish through one too (the app passes `Agent.publish`)."""


def as_async_emit(sink: Callable[[Any], Any]) -> Emit:
    """Wrap a sync or async event sink so the loop can always await it."""
    if inspect.iscoroutinefunction(sink):
        return sink

    async def emit(event: Any) -> None:
        result = sink(event)
        if inspect.isawaitable(result):
            await result

    return emit
