"""A conversation's `stream_fn`: the agent's request forwarded, the upstream's answer
read into stream events, and copied to the agent as it comes unless it must wait.

A streamed answer is copied event by event (whole SSE events, so one is never
half passed and half held) before the loop sees it, so the agent waits for no
listener. It is held from its first tool call on only when a rule or breakpoint
could stop a call of that tool (`Proxy.must_hold`); the held tail is released,
rewritten as the decisions say, once every call is decided (`release`). A whole
(non-streamed) answer with tool calls always waits for the decisions. The last
event of a response (`[DONE]`, or the end of the body) goes out only once the
conversation knows what the agent received, so the agent's next request always
finds its conversation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio

from workbench.agent import AssistantMessageEvent, LlmContext, Model, StreamOptions, ToolCall
from workbench.bus_events import ProviderRequestEvent, ProxyNoticeEvent, ResponseReleasedEvent
from workbench.json_text import LINE_DEPTH, loads
from workbench.providers.openai_stream import StreamError, error_text
from workbench.providers.response_record import ResponseRecord
from workbench.providers.stream_builder import Events, StreamBuilder
from workbench.proxy.continuation import Continuation
from workbench.proxy.exchange import Exchange
from workbench.proxy.formats.base import SentCall, WireEvent
from workbench.proxy.formats.responses_reader import upstream_line
from workbench.proxy.release import data_of, keep_alive, release, reply_key
from workbench.sse import SSESplitter

if TYPE_CHECKING:
    from workbench.proxy.conversation import Conversation, PendingRelease

log = logging.getLogger(__name__)


class Forwarder:
    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation

    def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        return self._turn(model, options)

    async def _turn(
        self, model: Model, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        conv = self.conversation
        builder = StreamBuilder(model)
        follow, conv.follow = conv.follow, None
        exchange = follow.exchange if follow else await conv.next_exchange(options.signal)
        if exchange is None:
            for event in builder.start() + builder.error("Request was aborted", aborted=True):
                yield event
            return
        turn = _Turn(self, exchange, builder, follow)
        conv.inflight = exchange
        try:
            async for event in turn.run():
                yield event
        finally:
            if not turn.settled:  # cancelled (an abort's grace ran out): free the agent
                exchange.fail(502, "The workbench proxy stopped this request")
                conv.failed(exchange)

    async def release(self, pending: PendingRelease) -> None:
        """Send a held response as the decisions say (`workbench.proxy.release`)."""
        await release(self.conversation, pending)


class _Turn:
    """One request forwarded and its answer read."""

    def __init__(
        self,
        forwarder: Forwarder,
        exchange: Exchange,
        builder: StreamBuilder,
        follow: Continuation | None = None,
    ) -> None:
        self.forwarder = forwarder
        self.follow = follow
        """The reply this turn goes on with (its denied calls answered by the proxy)."""
        self.given: list[bytes] = []
        """A continuation: what the agent received of it (rewritten to join its reply)."""
        self.conv = forwarder.conversation
        self.proxy = self.conv.proxy
        self.exchange = exchange
        self.builder = builder
        self.reader = exchange.format.reader(builder, exchange.body)
        self.record = ResponseRecord(self.reader, capture_chunks=self.proxy.options.capture_chunks)
        self.holding = False
        self.held: list[WireEvent] = []
        self.last: list[WireEvent] = []
        """The stream's closing events, sent once the conversation is up to date."""
        self.whole: dict[str, Any] | None = None
        self.sent: dict[str, SentCall] = {}
        """The calls the agent had received (in part) when the stream began to be held."""
        self.passed: dict[int, str] = {}
        """Tool calls copied on as they came, by content index, with their names then."""
        self.cut = False
        """A call copied on turned out to need a decision: the stream is cut for the agent."""
        self.broken: str | None = None
        """Why the stream could not be read on (it is still copied to the agent)."""
        self.settled = False

    async def run(self) -> AsyncIterator[AssistantMessageEvent]:
        conv, exchange = self.conv, self.exchange
        if self.follow is not None:
            body, notes = self.follow.body, [self.follow.note()]
        elif exchange.by_id is not None:
            answers = [
                a for r in conv.repairs if r.position == exchange.reply_at for a in r.results
            ]
            body, notes = exchange.format.by_id(exchange.body, exchange.by_id, answers)
        else:
            body, notes = exchange.format.restore_removed(
                exchange.body, conv.repairs, exchange.messages
            )
        self.upstream_body = body
        await self.proxy.publish(
            conv,
            ProviderRequestEvent(
                request_id=self.record.request_id,
                provider="proxy",
                model=self.builder.message.model,
                url=exchange.url,
                body=body,
                headers=exchange.headers,
                repairs=notes,
                sent_body=exchange.body if notes and self.follow is None else None,
            ),
        )
        for event in self.builder.start():
            yield event
        self.record.start()
        final: Events
        try:
            assert self.proxy.client is not None  # set while the server runs
            async with self.proxy.client.stream(
                "POST",
                exchange.url,
                headers=self.proxy.upstream_headers(exchange.forward, exchange.format.auth),
                content=exchange.raw
                if not notes
                else json.dumps(body, ensure_ascii=False).encode(),
            ) as response:
                self.record.status = response.status_code
                media = response.headers.get("content-type", "application/json")
                if response.status_code == 200 and "event-stream" in media:
                    exchange.start(200, media)
                    async for event in self._stream(response):
                        yield event
                else:
                    data = await response.aread()
                    for event in self._whole(data, media):
                        yield event
            final = self.builder.error(self.broken) if self.broken else self.reader.finish()
            upstream_id = getattr(self.reader, "response_id", None)
            if upstream_id is not None:
                conv.reply_ids = (self._client_id(upstream_id), upstream_id)
            for item in getattr(self.reader, "upstream_items", ()):
                await self.proxy.publish(
                    conv,
                    ProxyNoticeEvent(kind="upstream_item", text=upstream_line(item), item=item),
                )
        except StreamError as exc:
            final = self.builder.error(str(exc), usage=self.reader.usage)
        except Exception as exc:  # noqa: BLE001 - the upstream failing is an error reply
            final = self.builder.error(
                f"The upstream {self.proxy.upstream} failed: {type(exc).__name__}: {exc}",
                usage=self.reader.usage,
            )
        await self._publish_response()
        await self._settle(final)
        for event in final:
            yield event

    async def _stream(self, response: Any) -> AsyncIterator[AssistantMessageEvent]:
        splitter = SSESplitter()
        async for piece in response.aiter_raw():
            events = [self.exchange.format.read_event(e) for e in splitter.feed(piece)]
            sent = [self._pass_early(e) for e in events]
            if any(sent):  # let the agent's copy be written before the reading below
                await anyio.lowlevel.checkpoint()
            for event, was_sent in zip(events, sent, strict=True):
                for e in self._event(event, was_sent):
                    yield e
        for rest in splitter.rest():
            for e in self._event(self.exchange.format.read_event(rest), False):
                yield e

    def _pass_early(self, event: WireEvent) -> bool:
        """Copy an event on before reading it, when reading it cannot make it wait: not
        while holding, and not an event that may start a tool call or end the stream."""
        if self.holding or self.last or self.broken or event.calls or event.done:
            return False
        self._send(event.raw)
        return True

    def _client_id(self, upstream_id: str) -> str:
        """The id the agent's reply has (the first of a reply that went on)."""
        follow = self.follow
        if follow is None:
            return upstream_id
        given = follow.splice.response_id or (follow.first or {}).get("id")
        return given if isinstance(given, str) else upstream_id

    def _send(self, piece: bytes) -> None:
        if self.follow is None:
            self.exchange.send(piece)
            return
        wire = self.exchange.format
        for out in wire.splice_piece(piece, self.follow.splice):
            if wire.splices:  # rewritten to join the agent's reply (the network view shows it)
                self.given.append(out)
            self.exchange.send(out)

    def _event(self, event: WireEvent, sent: bool) -> Events:
        """One SSE event: read, and copied on (or held) unless it already was."""
        data = event.event.data
        events: Events = []
        broken_before = self.broken is not None
        if data is not None:
            self.record.keep(data)
            if not broken_before:
                before = self._arguments() if event.calls and not self.holding else None
                try:
                    if event.chunk is None:
                        events = self.reader.feed_data(data, event.event.name)
                    else:
                        events = self.reader.feed_parsed(event.chunk, data, event.event.name)
                except StreamError as exc:
                    self.broken = str(exc)
                self.record.mark_first_token()
                if before is not None:
                    self._check_hold(events, before)
            if event.done:
                self.last.append(event)
                self.reader.saw_done = True
                return events
        if sent or broken_before:
            pass  # after what the proxy could not read, nothing reaches the agent
        elif self.last:
            self.last.append(event)  # anything after [DONE] keeps its place
        elif self.holding:
            self.held.append(event)
        else:
            self._send(event.raw)
        return events

    def _arguments(self) -> dict[int, str]:
        """The argument text of each call so far, by content index."""
        return {
            i: block.raw_arguments or ""
            for i, block in enumerate(self.builder.message.content)
            if isinstance(block, ToolCall)
        }

    def _check_hold(self, events: Events, before: dict[int, str]) -> None:
        """Hold from a tool call on if a rule or breakpoint could stop it. A name that
        grows after its first piece (some servers send it in parts) and only then
        needs holding cuts the stream: the agent has the call's first pieces, and
        must not run a call nobody judged."""
        stepper = self.conv.runtime.stepper
        for e in events:
            if e.type == "toolcall_start" and e.content_index is not None:
                self.passed[e.content_index] = self._name_at(e.content_index)
        for index, name in self.passed.items():
            current = self._name_at(index)
            if current == name and index not in self._new(events):
                continue
            self.passed[index] = current
            if self.proxy.must_hold(current, stepper):
                self.holding = True
                self.cut = index not in self._new(events)
                self._note_sent(before)
                return

    def _note_sent(self, before: dict[int, str]) -> None:
        """The calls the agent already has (in part) as the stream starts to be held."""
        content = self.builder.message.content
        for index, arguments in before.items():
            wire = self.reader.wire_index(index)
            if wire is not None:
                self.sent[content[index].id] = SentCall(wire, arguments)  # type: ignore[union-attr]

    @staticmethod
    def _new(events: Events) -> set[int]:
        return {
            e.content_index
            for e in events
            if e.type == "toolcall_start" and e.content_index is not None
        }

    def _name_at(self, index: int | None) -> str:
        content = self.builder.message.content
        block = content[index] if index is not None and index < len(content) else None
        return getattr(block, "name", "")

    def _whole(self, data: bytes, media: str) -> Events:
        """A whole response: a completion (held while it has tool calls) or an error."""
        self.record.keep(data.decode("utf-8", errors="replace"))
        parsed: Any = None
        try:
            parsed = loads(data, LINE_DEPTH)
        except ValueError:
            pass
        status = self.record.status or 502
        if status != 200 or not isinstance(parsed, dict) or parsed.get("error"):
            shown = parsed if parsed is not None else data.decode("utf-8", errors="replace")
            message = f"The upstream answered {status}: {error_text(shown)}"
            if self.follow is not None and self.exchange.ready.is_set():
                pass  # a stream the agent has begun: it is cut (in `_settle`)
            elif status != 200:
                self.exchange.start(status, media, data)  # clients run nothing from an error
            else:  # a 200 the proxy cannot judge must not reach the agent as it is
                self.exchange.fail(502, message)
            raise StreamError(message)
        clean, changed = self.exchange.format.without_unjudged(parsed)
        self.whole = clean
        events = self.reader.feed(clean)
        self.reader.saw_done = True
        self.record.ttft_ms = self.record.elapsed_ms()
        if not self.builder.message.tool_calls:
            if self.follow is not None and self.follow.first is not None:
                joined = self.exchange.format.join_whole(self.follow.first, clean)
                self.exchange.start(200, media, json.dumps(joined, ensure_ascii=False).encode())
            else:
                self.exchange.start(200, media, json.dumps(clean).encode() if changed else data)
        return events

    async def _settle(self, final: Events) -> None:
        """The answer is read: give the agent what it may have now, and note it.

        What the agent may have is settled before the last bytes go out, so its next
        request finds this conversation up to date."""
        conv, exchange = self.conv, self.exchange
        self.settled = True
        message = final[-1].message if final else None
        calls = message.tool_calls if message is not None else []
        for call in calls:  # a call of a tool the agent never declared still gets a tool
            conv.foreign_tool(call.name)
        ok = message is not None and message.stop_reason not in ("error", "aborted")
        waiting = calls and ok and not self.cut and (self.holding or self.whole is not None)
        if waiting:
            from workbench.proxy.conversation import PendingRelease

            assert message is not None
            conv.pending = PendingRelease(
                exchange,
                self.record.request_id,
                message,
                held=self.held + self.last if self.whole is None else None,
                body=self.whole,
                sent=self.sent,
            )
            conv.pending.follow = self.follow
            conv.pending.upstream_body = self.upstream_body
            self.proxy.start_timer(keep_alive, conv, conv.pending)
            return
        if (
            message is not None
            and message.stop_reason != "error"
            and exchange.ready.is_set()
            and not self.cut
        ):
            head = self.follow.text if self.follow is not None else ""
            key = reply_key(head + message.text, [(c.id, c.name) for c in calls])
            conv.remember_hidden(exchange, key, self.follow)
            conv.expect(exchange, key, [c.id for c in calls])
        else:
            conv.failed(exchange)
        if not exchange.ready.is_set():
            exchange.fail(
                502, (message.error_message if message is not None else None) or "no response"
            )
        if not self.holding:
            for event in self.last:
                self._send(event.raw)
        # else: the reply failed after its calls were held, and no call may go out
        # undecided: the agent sees the stream cut, as if the upstream had failed.
        failed = message is not None and message.stop_reason in ("error", "aborted")
        if self.whole is None and (failed or self.cut):
            exchange.cut()
        else:
            exchange.close()
        await self.proxy.publish(
            conv,
            ResponseReleasedEvent(
                request_id=self.record.request_id,
                changed=self.holding or bool(self.given),
                held=self.holding,
                removed=[c.id for c in calls] if self.holding else [],
                chunks=[d for d in (data_of(p) for p in self.given) if d is not None]
                if self.given and not self.holding
                else None,
            ),
        )

    async def _publish_response(self) -> None:
        event = self.record.event(self.builder.message.error_message)
        await self.proxy.publish(self.conv, event)
