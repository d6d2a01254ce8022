"""Delivering a running call's `on_update` partial results as bus events, in order."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup

from workbench.agent.content_caps import DEFAULT_CAPS, ContentCaps
from workbench.agent.emit import Emit
from workbench.agent.events import ToolExecutionUpdateEvent
from workbench.agent.result_limits import limit_result
from workbench.agent.tool import AgentToolResult, to_tool_result
from workbench.agent.types import ToolCall


class UpdatePump:
    """Delivers a call's `on_update` partial results in order, and none after close."""

    __slots__ = ("emit", "call", "tg", "queue", "open", "idle", "running", "redact", "caps")

    def __init__(
        self,
        emit: Emit,
        call: ToolCall,
        tg: TaskGroup,
        redact: Callable[[str], str] | None = None,
        caps: ContentCaps = DEFAULT_CAPS,
    ) -> None:
        self.caps = caps
        stream = getattr(redact, "stream", None)
        self.redact = stream() if callable(stream) else redact
        """Applied to every string of every update, in order (updates are size-capped
        either way): a `Redactor`'s stream, so a secret split between two updates is
        still found."""
        self.emit = emit
        self.call = call
        self.tg = tg
        self.queue: deque[AgentToolResult] = deque()
        self.open = True
        self.idle: anyio.Event | None = None
        self.running = False

    def push(self, partial: AgentToolResult) -> None:
        if not self.open:
            return
        if not isinstance(partial, AgentToolResult):
            partial = to_tool_result(partial)
        self.queue.append(limit_result(partial, self.redact, self.caps))
        if not self.running:
            self.running = True
            self.idle = anyio.Event()
            self.tg.start_soon(self._drain)

    async def _drain(self) -> None:
        try:
            while self.queue:
                partial = self.queue.popleft()
                await self.emit(
                    ToolExecutionUpdateEvent(
                        tool_call_id=self.call.id,
                        tool_name=self.call.name,
                        args=self.call.arguments,
                        partial_result=partial,
                    )
                )
        finally:
            self.running = False
            assert self.idle is not None
            self.idle.set()

    async def close(self) -> None:
        self.open = False
        while self.running and self.idle is not None:
            await self.idle.wait()
