"""The OpenAI-compatible provider: chat completions, streamed, through the `openai` SDK.

People point the workbench at OpenAI, Ollama, vLLM, llama.cpp's server and LM
Studio, so this provider must never take the workbench down. Every failure ends
the stream with an `error` event carrying the partial reply and a readable
`error_message`: connection refused, timeouts, HTTP errors with the server's own
message, rate limits (after the SDK's retries), malformed chunks, a body cut off
mid-stream. Aborting closes the HTTP response at once and keeps what arrived.

It uses `client.chat.completions.with_streaming_response.create(stream=True)`: the
SDK builds and sends the request, authenticates, retries and raises typed status
errors, and we read the raw SSE lines ourselves. That is what lets the network view
show the raw chunks, lets us tell a stream that reached `[DONE]` from one that was
cut, and keeps a malformed chunk from losing the content before it.

Each request is published as a `ProviderRequestEvent` (the exact JSON body, never
the key) and its outcome as a `ProviderResponseEvent` (status, server-reported
model, time to first token, total time, usage).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import openai

from workbench.agent.abort import AbortSignal
from workbench.agent.config import LlmContext, StreamOptions, resolve
from workbench.agent.emit import Emit
from workbench.agent.events import AssistantMessageEvent, Event
from workbench.agent.types import Model
from workbench.bus_events import ProviderRequestEvent
from workbench.json_text import LINE_DEPTH, loads
from workbench.providers.openai_errors import describe_error, redact
from workbench.providers.openai_messages import JsonDict, build_request_body
from workbench.providers.openai_stream import (
    EMPTY_RESPONSE,
    ChunkReader,
    SSEDecoder,
    StreamError,
    error_text,
)
from workbench.providers.response_record import ResponseRecord
from workbench.providers.settings import OpenAISettings
from workbench.providers.stream_builder import Events, StreamBuilder
from workbench.redact import is_credential_header

__all__ = ["OpenAIProvider", "describe_error", "redact"]

log = logging.getLogger(__name__)
T = TypeVar("T")

NO_KEY = "no-key"
"""Sent when no key is configured: the SDK insists on one, local servers ignore it."""
ABORTED_MESSAGE = "Request was aborted"
DRAIN_SECONDS = 0.25
"""How long to wait for the body to end after `[DONE]` before closing the connection."""
_SDK_PARAMS = frozenset(
    {
        "stream_options",
        "temperature",
        "max_tokens",
        "max_completion_tokens",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
    }
)


class OpenAIProvider:
    """A stream function for any OpenAI-compatible chat-completions server.

    Args:
        settings: where the server is and how to ask it.
        publish: awaited with a `ProviderRequestEvent` before each request and a
            `ProviderResponseEvent` after it (the app passes `agent.publish`). May be
            set after construction. A failing publish is logged, never fatal.
        capture_chunks: keep every SSE data line in the response event.
        sticky_tool_choice: keep a forced tool choice (`required` or a tool name) for
            the whole run. By default it applies until the model has made a tool call,
            then requests say `auto` until the run ends (as the OpenAI Agents SDK does),
            so a forced run can end. Needs `on_event` subscribed to the agent's bus.
    """

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        publish: Emit | None = None,
        capture_chunks: bool = False,
        sticky_tool_choice: bool = False,
    ) -> None:
        self.settings = settings
        self.publish = publish
        self.capture_chunks = capture_chunks
        self.sticky_tool_choice = sticky_tool_choice
        self.forced_choice_used = False
        """The model has made a tool call in this run (a forced choice is spent)."""
        self._client: openai.AsyncOpenAI | None = None
        self._client_key: tuple[object, object] | None = None

    @property
    def model(self) -> Model:
        return Model(id=self.settings.model, provider="openai", base_url=self.settings.base_url)

    def client(self) -> openai.AsyncOpenAI:
        """The SDK client, made once per event loop and per settings object.

        To switch endpoints, assign a new `settings` object (do not mutate it in place).
        """
        key = (asyncio.get_running_loop(), self.settings)
        if (
            self._client is None
            or self._client_key is None
            or any(a is not b for a, b in zip(self._client_key, key, strict=True))
        ):
            s = self.settings
            self._client = openai.AsyncOpenAI(
                api_key=s.api_key.get_secret_value() if s.api_key else NO_KEY,
                base_url=s.base_url,
                timeout=openai.Timeout(s.timeout, connect=s.connect_timeout),
                max_retries=s.max_retries,
            )
            self._client_key = key
        return self._client

    def request_settings(self) -> OpenAISettings:
        """The settings of the next request: a spent forced tool choice becomes `auto`."""
        s = self.settings
        if (
            self.forced_choice_used
            and not self.sticky_tool_choice
            and s.tool_choice not in (None, "auto", "none")
        ):
            return s.model_copy(update={"tool_choice": "auto"})
        return s

    def on_event(self, event: Any, _signal: Any = None) -> None:
        """Bus listener: a run starts with the forced choice; a tool call spends it."""
        kind = event.type
        if kind == "agent_start":
            self.forced_choice_used = False
        elif kind == "message_end" and getattr(event.message, "tool_calls", None):
            self.forced_choice_used = True

    async def aclose(self) -> None:
        """Close the HTTP connection pool (the provider can still be used afterwards)."""
        if self._client is not None:
            client, self._client, self._client_key = self._client, None, None
            await client.close()

    def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        return _Exchange(self, model, context, options.signal).run()


class _Aborted(Exception):
    """The run's signal fired while we were waiting on the server."""


class _Exchange:
    """One request and its streamed reply."""

    def __init__(
        self,
        provider: OpenAIProvider,
        model: Model,
        context: LlmContext,
        signal: AbortSignal | None,
    ) -> None:
        self.provider = provider
        self.settings = provider.request_settings()
        self.model_id = model.id or self.settings.model
        self.context = context
        self.signal = signal
        self.builder = StreamBuilder(model)
        self.reader = ChunkReader(self.builder)
        self.sse = SSEDecoder()
        self.record = ResponseRecord(self.reader, capture_chunks=provider.capture_chunks)

    async def run(self) -> AsyncIterator[AssistantMessageEvent]:
        if self.signal is not None and self.signal.aborted:
            for event in self.builder.start() + self.builder.error(ABORTED_MESSAGE, aborted=True):
                yield event
            return
        try:
            body, repairs = build_request_body(self.model_id, self.context, self.settings)
        except ValueError as exc:
            for event in self.builder.start() + self.builder.error(f"Invalid request: {exc}"):
                yield event
            return
        await self._publish_request(body, repairs)
        self.record.start()
        for event in self.builder.start():
            yield event
        final: Events
        try:
            async with contextlib.AsyncExitStack() as stack:
                response = await self._abortable(lambda: self._open(stack, body))
                self.record.status = response.status_code
                async with contextlib.aclosing(self._read(response)) as events:
                    async for event in events:
                        yield event
            final = self.reader.finish()
        except _Aborted:
            self.record.aborted = True
            final = self.reader.held() + self.builder.error(
                ABORTED_MESSAGE, aborted=True, usage=self.reader.usage
            )
        except Exception as exc:  # noqa: BLE001 - a provider never raises
            message, status = describe_error(exc, self.settings, self.reader.chunk_count)
            self.record.status = status or self.record.status
            final = self.reader.held() + self.builder.error(
                redact(message, self.settings), usage=self.reader.usage
            )
        await self._publish_response()
        for event in final:
            yield event

    # -- the wire ----------------------------------------------------------------

    async def _open(self, stack: contextlib.AsyncExitStack, body: JsonDict) -> Any:
        typed = {k: v for k, v in body.items() if k in _SDK_PARAMS}
        extra = {
            k: v
            for k, v in body.items()
            if k not in _SDK_PARAMS and k not in ("model", "messages", "stream")
        }
        manager = self.provider.client().chat.completions.with_streaming_response.create(
            model=body["model"],
            messages=body["messages"],
            stream=body.get("stream", True),
            extra_headers=dict(self.settings.extra_headers) or None,
            extra_body=extra or None,
            **typed,
        )
        return await stack.enter_async_context(manager)

    async def _read(self, response: Any) -> AsyncGenerator[AssistantMessageEvent, None]:
        """The body's events, line by line, until `[DONE]` or the end of the body."""
        content_type = response.headers.get("content-type", "")
        if "json" in content_type and "event-stream" not in content_type:
            for event in await self._read_whole(response):
                yield event
            return
        if "html" in content_type:
            raise StreamError(
                f"The server answered with a web page ({content_type}), not an event stream: "
                f"check the base URL ({self.settings.base_url})"
            )
        lines = response.iter_lines().__aiter__()
        while not self.reader.saw_done:
            line = await self._abortable(lambda: anext(lines, None))
            for event in self._on_line(line):
                yield event
            if line is None:
                return
        with anyio.move_on_after(DRAIN_SECONDS):  # lets the connection be reused
            async for _ in lines:
                pass

    def _on_line(self, line: str | None) -> Events:
        """One line of the body (None: the body ended)."""
        sse = self.sse.flush() if line is None else self.sse.feed(line)
        if sse is None:
            return []
        event_name, data = sse
        self.record.keep(data)
        events = self.reader.feed_data(data, event_name)
        self.record.mark_first_token()
        return events

    async def _read_whole(self, response: Any) -> Events:
        """A server that ignored `stream: true` and sent one JSON completion."""
        text = await self._abortable(response.text)
        self.record.keep(text)
        if not text.strip():
            raise StreamError(EMPTY_RESPONSE)
        try:
            data = loads(text, LINE_DEPTH)
        except ValueError:
            raise StreamError(
                f"The server sent a JSON content type but invalid JSON: {text[:300]}"
            ) from None
        if not isinstance(data, dict) or data.get("error"):
            raise StreamError(f"The server reported an error: {error_text(data)}")
        events = self.reader.feed(data)
        self.reader.saw_done = True
        self.record.mark_first_token()
        return events

    async def _abortable(self, start: Callable[[], Awaitable[T]]) -> T:
        """Await `start()`, giving up (and raising `_Aborted`) as soon as the signal fires."""
        signal = self.signal
        if signal is None:
            return await start()
        if signal.aborted:
            raise _Aborted
        with anyio.CancelScope() as scope:
            remove = signal.add_listener(lambda _reason: scope.cancel())
            try:
                return await start()
            finally:
                remove()
        raise _Aborted  # only reached when the scope swallowed our own cancellation

    # -- telemetry ---------------------------------------------------------------

    async def _publish_request(self, body: JsonDict, repairs: list[str]) -> None:
        headers = {
            k: v for k, v in self.settings.extra_headers.items() if not is_credential_header(k)
        }
        await self._publish(
            ProviderRequestEvent(
                request_id=self.record.request_id,
                provider="openai",
                model=self.model_id,
                url=self.settings.chat_completions_url,
                body=body,
                headers=headers,
                repairs=repairs,
            )
        )

    async def _publish_response(self) -> None:
        await self._publish(self.record.event(self.builder.message.error_message))

    async def _publish(self, event: Event) -> None:
        if self.provider.publish is None:
            return
        try:
            await resolve(self.provider.publish(event))
        except Exception:  # noqa: BLE001 - telemetry must not break the run
            log.exception("publishing %s failed", event.type)  # type: ignore[attr-defined]
