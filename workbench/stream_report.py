"""Any `stream_fn` in the network view (F4) and the summary: each call is reported as
a request with what the loop handed it, and its reply's timing, usage and stop reason.

The workbench's own providers publish their wire (the exact HTTP body, or the body a
server would get, marked simulated). A `stream_fn` of your own is seen only from the
loop's side: `ReportedStream` publishes a `ProviderRequestEvent` with `via="stream_fn"`
(the context: system prompt, messages, tools) and a `ProviderResponseEvent` when the
reply ends (time to its first event, total time, usage if the reply carried any).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from workbench.agent import (
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
)
from workbench.agent.config import resolve
from workbench.bus_events import ProviderRequestEvent, ProviderResponseEvent


def reports_itself(stream_fn: Any) -> bool:
    """Whether `stream_fn` publishes its own requests (the workbench's providers)."""
    return hasattr(stream_fn, "publish")


class ReportedStream:
    """`stream_fn`, with each call published as a request and its response."""

    def __init__(self, stream_fn: Any, publish: Callable[[Any], Awaitable[None] | None]) -> None:
        self.stream_fn = stream_fn
        self.publish = publish

    def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        return self._reported(model, context, options)

    async def _reported(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        request_id = f"fn_{uuid.uuid4().hex[:16]}"
        await resolve(
            self.publish(
                ProviderRequestEvent(
                    request_id=request_id,
                    provider=model.provider,
                    model=model.id,
                    body=context_body(context),
                    via="stream_fn",
                )
            )
        )
        started = time.monotonic()
        first: float | None = None
        final: AssistantMessage | None = None
        error: str | None = None
        try:
            async for event in self.stream_fn(model, context, options):
                if first is None and event.type != "start":
                    first = (time.monotonic() - started) * 1000
                if event.type in ("done", "error"):
                    final = event.message
                yield event
        except Exception as exc:  # noqa: BLE001 - reported, then the loop sees it as before
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            await resolve(self.publish(_response(request_id, started, first, final, error)))


def _response(
    request_id: str,
    started: float,
    first: float | None,
    final: AssistantMessage | None,
    error: str | None,
) -> ProviderResponseEvent:
    usage = final.usage if final is not None else None
    reported = usage is not None and (usage.input or usage.output or usage.total_tokens)
    if final is not None and final.stop_reason == "error" and error is None:
        error = final.error_message
    return ProviderResponseEvent(
        request_id=request_id,
        ttft_ms=first,
        total_ms=(time.monotonic() - started) * 1000,
        usage=usage if reported else None,
        error=error if final is None or final.stop_reason != "aborted" else None,
        finish_reason=final.stop_reason if final is not None else None,
        aborted=final is not None and final.stop_reason == "aborted",
    )


def context_body(context: LlmContext) -> dict[str, Any]:
    """What the loop handed the stream_fn, as JSON."""
    return {
        "system_prompt": context.system_prompt,
        "messages": [m.model_dump(mode="json") for m in context.messages],
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.json_schema}
            for t in context.tools
        ],
    }
