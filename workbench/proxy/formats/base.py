"""What every wire format gives the conversation core: no I/O here.

A format reads a request into the shape the core keeps conversations in (chat-like
messages: `role`, `content`, `tool_calls` with `id` and `function.name`, and
`tool_call_id` on results, so keys and routing are one mechanism for all), reads
a response (streamed or whole) into stream events with a reader, and rewrites the
response once the gate has decided (`release_stream`, `release_whole`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.agent import AssistantMessage
from workbench.providers.openai_stream import StreamError
from workbench.providers.stream_builder import Events, StreamBuilder
from workbench.proxy.wire import JsonDict, RemovedCall, Repair, Verdict
from workbench.sse import SSEEvent, SSESplitter, sse_event


@dataclass
class WireEvent:
    """One streamed event as the proxy and the agent both read it."""

    event: SSEEvent
    chunk: Any
    """The data parsed as JSON (None: no data, `[DONE]`, or not JSON)."""
    raw: bytes
    """What the agent may be sent: the event's own bytes, or the event re-written
    without what the proxy cannot judge."""
    done: bool = False
    """The stream's closing event: sent once the conversation knows what the agent got."""
    calls: bool = False
    """The event may start, carry or restate a tool call."""


@dataclass
class SentCall:
    """A call streamed to the agent before the response was held: where, and how much."""

    wire_index: int
    arguments: str
    """The argument text the agent has received."""


@dataclass
class Splice:
    """How a continuation's events join what the agent already has of its reply (the
    proxy answered the reply's denied calls upstream itself, see `Verdict.continued`)."""

    offset: int = 0
    """Anthropic content blocks, Responses output indices, the agent's reply already has."""
    output: list[JsonDict] = field(default_factory=list)
    """Responses: the output items the agent already has."""
    response_id: str | None = None
    """Responses: the response id the agent was given first (its SDK keeps to it)."""

    def then(self, later: Splice) -> Splice:
        """This splice, followed by one more reply answered by the proxy."""
        return Splice(self.offset + later.offset, self.output + later.output, self.response_id)


@dataclass
class StreamRelease:
    """The held tail of a stream as released, or why it cannot be."""

    pieces: list[bytes] = field(default_factory=list)
    refused: str = ""
    """Set when a call already streamed was denied or edited: the agent has part of it,
    so the stream is cut (the agent runs nothing) rather than finished."""
    splice: Splice = field(default_factory=Splice)
    """A continued release: where the continuation's events go (the reply's own part)."""
    visible: int = 0
    """A continued release: how many pieces of the agent's reply this one gave it."""


@dataclass
class Tool:
    name: str
    description: str = ""
    schema: JsonDict | None = None


class Reader(Protocol):
    """Reads one response into a `StreamBuilder` (`ChunkReader` for chat)."""

    builder: StreamBuilder
    finish_reason: str | None
    usage: Any
    server_model: str | None
    saw_done: bool
    chunk_count: int
    first_content: bool

    def feed_parsed(self, chunk: Any, data: str, event: str | None = None) -> Events: ...
    def feed_data(self, data: str, event: str | None = None) -> Events: ...
    def feed(self, whole: JsonDict) -> Events: ...
    def finish(self) -> Events: ...
    def held(self) -> Events: ...
    def wire_index(self, content_index: int) -> int | None: ...


class ReaderBase:
    """What a format's reader keeps (what `ResponseRecord` reports on)."""

    def __init__(self, builder: StreamBuilder) -> None:
        self.builder = builder
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.server_model: str | None = None
        self.saw_done = False
        self.chunk_count = 0
        self.first_content = False
        self._calls: dict[int, int] = {}
        """The call's place on the wire (a block or output index) -> its content index."""

    def feed_parsed(self, chunk: Any, data: str, event: str | None = None) -> Events:
        raise NotImplementedError

    def feed_data(self, data: str, event: str | None = None) -> Events:
        raise NotImplementedError

    def feed(self, whole: JsonDict) -> Events:
        """A whole (non-streamed) response."""
        raise NotImplementedError

    END_EVENT = "final event"
    """The event that ends a complete stream (named when it never came)."""
    LENGTH_REASON = ""
    """The format's stop reason for a reply cut at the token limit."""

    def finish(self) -> Events:
        if not self.saw_done:
            raise StreamError(
                f"The stream ended early: no {self.END_EVENT} after {self.chunk_count} "
                "event(s) (the connection may have been cut)"
            )
        stop = "length" if self.finish_reason == self.LENGTH_REASON else None
        return self.builder.done(stop, self.usage)  # type: ignore[arg-type]

    def held(self) -> Events:
        return []

    def wire_index(self, content_index: int) -> int | None:
        for wire, content in self._calls.items():
            if content == content_index:
                return wire
        return None


class WireFormat:
    name = ""
    title = ""
    """What the format is called in messages."""
    auth = "bearer"
    """How the upstream's key is sent: bearer, x-api-key or x-goog-api-key."""

    def is_request(self, body: Any) -> bool:
        raise NotImplementedError

    def messages(self, body: JsonDict) -> list[JsonDict]:
        raise NotImplementedError

    def tools(self, body: JsonDict) -> list[Tool]:
        raise NotImplementedError

    def system(self, body: JsonDict) -> str:
        raise NotImplementedError

    def streamed(self, body: JsonDict, path: str) -> bool:
        return body.get("stream") is True

    def model(self, body: JsonDict, path: str) -> str:
        return str(body.get("model") or "unknown")

    def read_event(self, event: SSEEvent) -> WireEvent:
        raise NotImplementedError

    def reader(self, builder: StreamBuilder, body: JsonDict) -> Reader:
        raise NotImplementedError

    def without_unjudged(self, body: JsonDict) -> tuple[JsonDict, bool]:
        return body, False

    def release_stream(
        self, held: Sequence[WireEvent], verdict: Verdict, sent: dict[str, SentCall]
    ) -> StreamRelease:
        raise NotImplementedError

    def release_whole(self, body: JsonDict, verdict: Verdict) -> JsonDict:
        raise NotImplementedError

    def restore_removed(
        self, body: JsonDict, repairs: Sequence[Repair], messages: Sequence[JsonDict] = ()
    ) -> tuple[JsonDict, list[str]]:
        """The request as forwarded, with the calls the agent never received put back
        (only formats with a repair do; the others forward the agent's own request)."""
        return body, []

    @property
    def repairs(self) -> bool:
        return False

    # -- a reply whose calls were all denied, answered upstream by the proxy ------------

    LIST_KEY = "messages"
    """The request's list the model's turns are in."""
    splices = False
    """The continuation's events are rewritten to join the agent's reply (indices, ids)."""
    joins_text = False
    """The continuation's text is joined to the reply's text (no blocks or items)."""

    def hidden_entries(
        self,
        message: AssistantMessage,
        removed: Sequence[RemovedCall],
        body: JsonDict | None,
        held: Sequence[WireEvent] | None,
    ) -> list[JsonDict] | None:
        """The reply as the model wrote it (the whole response `body`, or the held tail of
        the stream) and an answer for each removed call, as entries of the request's
        list; None when this format cannot answer those calls (the reply then ends
        with a notice)."""
        return None

    def continues_from(self, body: JsonDict) -> str | None:
        """The id of the reply a request continues, when it continues by id (Responses'
        `previous_response_id`)."""
        return None

    def by_id(
        self, body: JsonDict, upstream_id: str, answers: Sequence[JsonDict]
    ) -> tuple[JsonDict, list[str]]:
        """A request that continues by id, as forwarded: from `upstream_id`, with the
        `answers` (chat-like tool messages) of the calls the agent never received."""
        return body, []

    def follow_up(self, body: JsonDict, entries: list[JsonDict]) -> JsonDict:
        """The request sent upstream to go on: `body` with `entries` appended."""
        items = body.get(self.LIST_KEY)
        return {**body, self.LIST_KEY: [*(items if isinstance(items, list) else ()), *entries]}

    def splice_event(self, chunk: JsonDict, splice: Splice) -> JsonDict | None:
        """A continuation's event as the agent gets it (None: left out)."""
        return chunk

    def join_whole(self, first: JsonDict, body: JsonDict) -> JsonDict:
        """A whole continuation joined to the reply the agent has so far (`first`)."""
        raise NotImplementedError

    def pieces(self, body: JsonDict) -> int:
        """How many pieces (blocks, items, parts) a whole released reply holds."""
        return 0

    def splice_piece(self, piece: bytes, splice: Splice) -> list[bytes]:
        """One piece of a continuation's stream, rewritten by `splice_event`."""
        if not self.splices:
            return [piece]
        out = []
        splitter = SSESplitter()
        for event in splitter.feed(piece) + splitter.rest():
            chunk = event.json()
            if not isinstance(chunk, dict):
                out.append(event.raw)
                continue
            joined = self.splice_event(chunk, splice)
            if joined is chunk:
                out.append(event.raw)
            elif joined is not None:
                out.append(sse_event(joined, event.name))
        return out
