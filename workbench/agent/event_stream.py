"""A run's events as an async iterator, then its result (pi-ai's `EventStream`).

`agent_loop(...)` and `agent_loop_continue(...)` return one: iterate it for the events,
then `await result()` for the new messages.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from workbench.agent.emit import Emit
from workbench.agent.types import Message


class AgentEventStream:
    """`agent_loop(...)`: the loop's events as an async iterator, then `await result()`."""

    def __init__(self, start: Callable[[Emit], Any]) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[Any](max_buffer_size=math.inf)
        self._start = start
        self._result: list[Message] | None = None
        self._error: BaseException | None = None
        self._done = anyio.Event()
        self._started = False

    def _ensure_started(self) -> None:
        if self._started:
            return
        self._started = True

        async def emit(event: Any) -> None:
            try:
                await self._send.send(event)
            except anyio.BrokenResourceError:
                pass  # the consumer stopped iterating; the run still goes on to its result

        async def runner() -> None:
            try:
                self._result = await self._start(emit)
            except BaseException as exc:  # re-raised from result()
                self._error = exc
            finally:
                self._send.close()
                self._done.set()

        self._task = asyncio.get_running_loop().create_task(runner())

    def __aiter__(self) -> AsyncIterator[Any]:
        self._ensure_started()
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        async with self._receive:
            async for event in self._receive:
                yield event

    async def result(self) -> list[Message]:
        self._ensure_started()
        await self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result
