"""AbortController / AbortSignal, the web platform's cancellation pair, on anyio.

A signal is a one-way latch: once aborted it stays aborted. Tools poll `.aborted`,
await `.wait()`, or call `.throw_if_aborted()`. A controller can be linked to a
parent signal, so aborting a run aborts every call's own signal, while aborting a
call's controller leaves the run alone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio


class AbortError(Exception):
    """Raised by `AbortSignal.throw_if_aborted()`."""

    def __init__(self, reason: Any = None) -> None:
        text = "Operation aborted" if reason is None else str(reason)
        if not text.startswith("Operation aborted"):
            text = f"Operation aborted: {text}"
        super().__init__(text)
        self.reason = reason


class AbortSignal:
    """The read side of an `AbortController`."""

    __slots__ = ("_aborted", "_reason", "_waiters", "_callbacks", "_next_key")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._waiters: list[anyio.Event] = []
        # Keyed so a remover is O(1): a run's signal may have thousands of per-call
        # controllers linked to it at once.
        self._callbacks: dict[int, Callable[[Any], None]] = {}
        self._next_key = 0

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def throw_if_aborted(self) -> None:
        if self._aborted:
            raise AbortError(self._reason)

    async def wait(self) -> None:
        """Return once the signal is aborted (at once if it already is)."""
        if self._aborted:
            return
        event = anyio.Event()
        self._waiters.append(event)
        try:
            await event.wait()
        finally:
            if event in self._waiters:
                self._waiters.remove(event)

    def add_listener(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Call `callback(reason)` on abort (at once if already aborted). Returns a remover."""
        if self._aborted:
            callback(self._reason)
            return _nothing
        key = self._next_key
        self._next_key = key + 1
        self._callbacks[key] = callback
        return partial(self._forget, key)

    def _forget(self, key: int) -> None:
        self._callbacks.pop(key, None)

    def _fire(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        waiters, self._waiters = self._waiters, []
        callbacks, self._callbacks = self._callbacks, {}
        for event in waiters:
            event.set()
        for callback in list(callbacks.values()):  # a callback may unlink others
            callback(reason)


def _nothing() -> None:
    return None


class AbortController:
    """Owns an `AbortSignal` and aborts it. Optionally follows a parent signal."""

    __slots__ = ("signal", "_unlink")

    def __init__(self, parent: AbortSignal | None = None) -> None:
        self.signal = AbortSignal()
        self._unlink: Callable[[], None] | None = None
        if parent is not None:
            self._unlink = parent.add_listener(self.abort)

    def abort(self, reason: Any = None) -> None:
        self.signal._fire("Operation aborted" if reason is None else reason)
        self.unlink()

    def unlink(self) -> None:
        """Stop following the parent signal (call when the child's work is over)."""
        if self._unlink is not None:
            self._unlink()
            self._unlink = None
