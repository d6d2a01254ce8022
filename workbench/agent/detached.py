"""Running a tool's `execute` in a task of its own, so a call can stop waiting for it."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import anyio


class Detached:
    """One `execute`, in a task of its own so the call can stop waiting for it.

    A tool blocked in a thread that ignores cancellation (`anyio.to_thread.run_sync`
    without `abandon_on_cancel`) cannot be interrupted; running it apart lets the
    batch give up on it after the grace and go on, while the task ends by itself
    whenever its thread returns (its outcome is then dropped).
    """

    __slots__ = ("execute", "args", "scope", "done", "value", "error", "failure")

    def __init__(self, execute: Any, args: tuple[Any, ...]) -> None:
        self.execute = execute
        self.args = args
        self.scope = anyio.CancelScope()
        # A plain asyncio event, as the task is one: a wide parallel batch has every
        # call waiting at once, and anyio's wrapper adds an object and a frame to each
        # (the waiter never finds it set already, and is cancelled through its task).
        self.done = asyncio.Event()
        self.value: Any = None
        self.error: Exception | None = None
        self.failure: BaseException | None = None

    async def start(self) -> None:
        """Start the task and wait for it to end (cancel the waiter to stop waiting)."""
        task = asyncio.get_running_loop().create_task(self._body())
        _running.add(task)
        task.add_done_callback(_running.discard)
        await self.done.wait()

    async def _body(self) -> None:
        try:
            with self.scope:
                signal = self.args[2]
                signal.throw_if_aborted()  # aborted before this task got to run
                value = self.execute(*self.args)
                self.value = await value if inspect.isawaitable(value) else value
        except Exception as exc:  # noqa: BLE001 - a raising tool is an error result
            self.error = exc
        except BaseException as exc:  # noqa: BLE001 - re-raised in the waiting task
            self.failure = exc
        finally:
            self.done.set()


_running: set[asyncio.Task[None]] = set()
"""Detached tool tasks still running (a reference keeps each alive until it ends)."""

ABANDON_AFTER = 0.5
"""Seconds a cancelled tool gets to end before the call stops waiting for it."""

_abandoned = 0


def note_abandoned() -> None:
    """Count a call given up on (its thread may still run)."""
    global _abandoned
    _abandoned += 1


def abandoned_calls() -> int:
    """How many tool calls this process gave up waiting for (their threads may still run)."""
    return _abandoned
