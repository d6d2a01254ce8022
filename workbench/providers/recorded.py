"""The recorded model: a stream function that plays a session's replies back.

A re-run (`workbench.session_runs.rerun`) puts it where a provider would be, so the
real loop, gate and tools run against exactly what the model said then.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Sequence

from workbench.agent import (
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
)
from workbench.providers.stream_builder import StreamBuilder


class RecordedModel:
    """A stream function that plays recorded replies, streaming them like a provider."""

    def __init__(self) -> None:
        self._queue: deque[AssistantMessage] = deque()
        self.served = 0
        self.sentinels: list[AssistantMessage] = []
        """Replies made up because the run asked for more than was recorded."""

    def load(self, replies: Sequence[AssistantMessage]) -> None:
        self._queue = deque(replies)
        self.served = 0

    async def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        builder = StreamBuilder(model)
        for event in builder.start():
            yield event
        if not self._queue:
            sentinel = AssistantMessage(stop_reason="stop", model=model.id, provider=model.provider)
            self.sentinels.append(sentinel)
            yield AssistantMessageEvent(type="done", message=sentinel)
            return
        reply = self._queue.popleft()
        self.served += 1
        events: list[AssistantMessageEvent] = []
        for block in reply.content:
            if block.type == "text":
                events += builder.text(block.text)
            elif block.type == "thinking":
                events += builder.thinking(block.thinking)
            else:
                index, started = builder.begin_tool_call(block.id, block.name)
                raw = block.raw_arguments
                events += started + builder.tool_call_delta(
                    index, raw if raw is not None else json.dumps(block.arguments)
                )
        events += builder.close_all()
        for event in events:
            yield event
        failed = reply.stop_reason in ("error", "aborted")
        yield AssistantMessageEvent(
            type="error" if failed else "done", message=reply.model_copy(deep=True)
        )
