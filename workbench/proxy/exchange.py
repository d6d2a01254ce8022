"""One request from a foreign agent and the response it will receive.

The HTTP handler waits for the head (`ready`), then answers with the whole body or
streams the pieces the conversation sends, as the conversation sends them. A
client that hangs up only stops the copying: the upstream response is still read
to its end, so the session records it whole.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from workbench.proxy.formats.base import Tool, WireFormat
from workbench.proxy.formats.chat import CHAT
from workbench.proxy.wire import JsonDict, MessageKey, message_keys


class UpstreamCut(Exception):
    """Ends a streamed response without its last chunk, as the upstream's ended: the
    agent sees the connection fail, not a clean end it might take for a whole reply."""


class Exchange:
    def __init__(
        self,
        body: JsonDict,
        raw: bytes,
        headers: dict[str, str],
        forward: dict[str, str],
        *,
        wire_format: WireFormat = CHAT,
        url: str = "",
        path: str = "",
    ) -> None:
        self.path = path
        """The path the client asked for, normalised (where Gemini names the model)."""
        self.format = wire_format
        self.url = url
        """Where the request goes upstream."""
        self.body = body
        self.raw = raw
        self.headers = headers
        """The agent's headers as recorded: no key of any kind, no hop-by-hop ones."""
        self.forward = forward
        """The agent's headers as forwarded (gateway keys kept; see `guard`)."""
        self.messages: list[Any] = wire_format.messages(body)
        """The request's messages in the shape conversations are kept in (chat-like)."""
        self.keys: list[MessageKey] = message_keys(self.messages)
        self.tools: list[Tool] = wire_format.tools(body)
        self.by_id: str | None = None
        """The request continues a reply by its id: the upstream's id it continues from."""
        self.reply_at = -1
        """With `by_id`: where that reply sits in the conversation (its messages are held
        by the upstream, not sent)."""
        self.status = 502
        self.media_type = "application/json"
        self.whole: bytes | None = None
        self.ready = anyio.Event()
        self._send, self._receive = anyio.create_memory_object_stream[bytes](math.inf)
        self._cut = False
        self.log: list[bytes] = []
        """Every piece sent, so a retry of the same request can be given the same answer."""
        self.closed = False
        self.follower: Exchange | None = None
        """The client's retry of this request: it gets everything this one gets."""
        self.gone = False
        """The client hung up before the body was complete."""
        self.on_gone: Callable[[Exchange], Any] | None = None

    def join_by_id(self, known: list[MessageKey], upstream_id: str) -> None:
        """The request continues, by id, a reply whose conversation holds `known`: its
        messages are taken as following those (which the upstream holds)."""
        self.by_id, self.reply_at = upstream_id, len(known) - 1
        self.messages = [{"role": "_held_by_id"}] * len(known) + self.messages
        self.keys = [*known, *self.keys]

    def start(self, status: int, media_type: str, whole: bytes | None = None) -> None:
        """Send the head (and, for a whole response, the body)."""
        if self.follower is not None:
            self.follower.start(status, media_type, whole)
        if self.ready.is_set():
            if whole is not None and self.whole is None:  # begun as a stream (keepalives)
                self.send(whole)
                self.close()
            return
        self.status, self.media_type, self.whole = status, media_type, whole
        self.ready.set()
        if whole is not None:
            self.close()

    def fail(self, status: int, message: str) -> None:
        """Answer with an OpenAI-shaped error if nothing was sent yet; else end the body."""
        if not self.ready.is_set():
            body = {"error": {"message": message, "type": "workbench_proxy_error"}}
            self.start(status, "application/json", json.dumps(body).encode())
        self.close()

    def send(self, data: bytes) -> None:
        """Copy one piece of a streamed body to the agent (dropped if it hung up)."""
        self.log.append(data)
        if self.follower is not None:
            self.follower.send(data)
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._send.send_nowait(data)

    def keepalive(self, piece: bytes) -> None:
        """Something every client skips, so a held response's connection stays up (not
        logged: a retry gets its own)."""
        if self.follower is not None:
            self.follower.keepalive(piece)
        elif not self.closed:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._send.send_nowait(piece)

    def close(self) -> None:
        self.closed = True
        self._send.close()
        if self.follower is not None:
            self.follower.close()

    def cut(self) -> None:
        """End a streamed body abruptly, after what was sent (see `UpstreamCut`)."""
        self._cut = True
        self.closed = True
        self._send.close()
        if self.follower is not None:
            self.follower.cut()

    def adopt(self, retry: Exchange) -> None:
        """`retry` is the client asking again for this very request: it gets what was sent
        so far and all that follows (this one's client has gone)."""
        self.follower = retry
        if self.ready.is_set():
            retry.start(self.status, self.media_type, self.whole)
            if self.whole is None:
                for piece in self.log:
                    retry.send(piece)
        if self.closed:
            (retry.cut if self._cut else retry.close)()
        with contextlib.suppress(anyio.ClosedResourceError):
            self._send.close()

    @property
    def last(self) -> Exchange:
        """The latest retry of this request (itself if none)."""
        return self.follower.last if self.follower is not None else self

    async def pieces(self) -> AsyncIterator[bytes]:
        complete = False
        try:
            async with self._receive:
                async for piece in self._receive:
                    yield piece
            complete = True
        finally:
            if not complete and self.follower is None:
                self.gone = True
                if self.on_gone is not None:
                    self.on_gone(self)
        if self._cut and self.follower is None:
            raise UpstreamCut("the upstream's response ended early")
