"""A provider's stream, as the loop reads it: cut off after an abort, closed when done.

A provider should end with an "aborted" message when the signal fires; one that does
not is cut off after the abort grace (`AbortGuard`). `close_stream` closes the stream
at once instead of leaving it to the garbage collector.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import anyio

from workbench.agent.abort import AbortSignal

UNGUARDED = contextlib.nullcontext()


class AbortGuard:
    """Cuts off a provider stream that has not ended `grace` seconds after the abort.

    Only time spent waiting on the provider counts: while the loop is busy with an
    event (listeners included) the deadline is lifted.
    """

    __slots__ = ("scope", "grace", "expire_at", "waiting", "remove")

    def __init__(self, scope: anyio.CancelScope, signal: AbortSignal, grace: float) -> None:
        self.scope = scope
        self.grace = grace
        self.expire_at: float | None = None
        self.waiting = True
        self.remove = signal.add_listener(self._on_abort)

    def _on_abort(self, _reason: Any) -> None:
        self.expire_at = anyio.current_time() + self.grace
        if self.waiting:
            self.scope.deadline = self.expire_at

    def pause(self) -> None:
        self.waiting = False
        if self.expire_at is not None:
            self.scope.deadline = math.inf

    def resume(self) -> None:
        self.waiting = True
        if self.expire_at is not None:
            self.scope.deadline = self.expire_at

    def disarm(self) -> None:
        self.remove()


async def close_stream(stream: Any) -> None:
    """Close a provider's stream now (an async generator left at `done` would otherwise
    only be finalized by the garbage collector)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # noqa: BLE001, S110 - the reply is complete; cleanup is best effort
            pass
