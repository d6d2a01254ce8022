"""A held response released to the agent as the decisions say (see `forward`).

The calls allowed go out with the arguments judged; the others are taken out. When
every call is taken out, the reply goes on upstream (`workbench.proxy.continuation`):
the agent gets nothing that ends it yet.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from workbench.bus_events import ProxyNoticeEvent, ResponseReleasedEvent
from workbench.json_text import normal
from workbench.proxy.continuation import Continuation, can_continue
from workbench.proxy.formats.base import Splice
from workbench.proxy.wire import HiddenTurn, MessageKey, ReleasedCall, Verdict
from workbench.sse import KEEPALIVE, SSESplitter

if TYPE_CHECKING:
    from workbench.proxy.conversation import Conversation, PendingRelease
    from workbench.proxy.exchange import Exchange

log = logging.getLogger(__name__)
SEPARATOR = "\n\n"
"""Between a reply's text and its continuation's, where the agent gets them as one text."""


def data_of(piece: bytes) -> str | None:
    """The data of one event the proxy wrote (for the network view)."""
    events = SSESplitter().feed(piece)
    return events[0].data if events else None


def reply_key(text: str, calls: list[tuple[str, str]]) -> MessageKey:
    """The key of the assistant message the agent will repeat in its next request."""
    return ("assistant", text, tuple(calls), None)


async def release(conv: Conversation, pending: PendingRelease) -> None:
    """Send a held response as the decisions say, and note what the agent received."""
    message = pending.message
    follow = pending.follow
    head = follow.text if follow is not None else ""
    send = follow.send if follow is not None else pending.exchange.send
    verdict = Verdict(text=message.text, order=[c.id for c in message.tool_calls])
    for call in message.tool_calls:
        outcome = pending.outcome[call.id]
        if isinstance(outcome, ReleasedCall):
            outcome.raw_arguments = call.raw_arguments or ""
            outcome.untouched = normal(outcome.raw_arguments) == normal(
                json.dumps(outcome.arguments)
            )
            verdict.kept.append(outcome)
        else:
            verdict.removed.append(outcome)
    exchange = pending.exchange
    entries = None
    if not verdict.kept and verdict.removed and can_continue(follow, pending.sent):
        entries = exchange.format.hidden_entries(
            message, verdict.removed, pending.body, pending.held
        )
    verdict.continued = entries is not None
    if verdict.continued and exchange.format.joins_text and message.text:
        verdict.separator = SEPARATOR
    released = ResponseReleasedEvent(
        request_id=pending.request_id,
        changed=True,
        held=True,
        removed=[c.id for c in verdict.removed],
    )
    if pending.held is not None:
        out = exchange.format.release_stream(pending.held, verdict, pending.sent)
        if out.refused:
            log.warning("a held stream was cut: %s", out.refused)
            conv.failed(exchange)
            exchange.cut()
            await conv.proxy.publish(conv, released.model_copy(update={"chunks": []}))
            return
        given: list[bytes] = []
        for piece in out.pieces:
            given += exchange.format.splice_piece(piece, follow.splice) if follow else [piece]
        released = released.model_copy(
            update={
                "chunks": [d for d in (data_of(p) for p in given) if d is not None],
                "continued": verdict.continued,
            }
        )
        if entries is not None:
            going = conv.follow = _go_on(pending, entries, verdict, out.splice, out.visible)
            conv.proxy.start_timer(keep_alive_while, conv, exchange, True, _waiting(conv, going))
        else:
            key = reply_key(head + verdict.released_text, [(c.id, c.name) for c in verdict.kept])
            conv.remember_removed(exchange, key, verdict, message, follow)
            conv.expect(exchange, key, [c.id for c in verdict.kept])
        for piece in out.pieces:
            send(piece)
        if entries is None:
            exchange.close()
    else:
        wire = exchange.format
        body = wire.release_whole(pending.body or {}, verdict)
        if follow is not None and follow.first is not None:
            body = wire.join_whole(follow.first, body)
        released = released.model_copy(update={"body": body, "continued": verdict.continued})
        if entries is not None:
            visible = wire.pieces(body) - (
                wire.pieces(follow.first) if follow and follow.first else 0
            )
            going = conv.follow = _go_on(pending, entries, verdict, Splice(), visible, body)
            conv.proxy.start_timer(keep_alive_while, conv, exchange, False, _waiting(conv, going))
        else:
            key = reply_key(head + verdict.released_text, [(c.id, c.name) for c in verdict.kept])
            conv.remember_removed(exchange, key, verdict, message, follow)
            conv.expect(exchange, key, [c.id for c in verdict.kept])
            exchange.start(200, "application/json", json.dumps(body, ensure_ascii=False).encode())
    await conv.proxy.publish(conv, released)
    if entries is not None:
        denied = ", ".join(f"{c.name} ({c.id})" for c in verdict.removed)
        text = (
            f"{denied}: denied, and answered upstream by the proxy with the denial; the "
            "model's answer goes to the agent as the rest of this reply"
        )
        await conv.proxy.publish(conv, ProxyNoticeEvent(kind="continued", text=text))


def _waiting(conv: Conversation, follow: Continuation) -> Callable[[], bool]:
    return lambda: conv.follow is follow


def _go_on(
    pending: PendingRelease,
    entries: list[dict[str, Any]],
    verdict: Verdict,
    splice: Splice,
    visible: int,
    first: dict[str, Any] | None = None,
) -> Continuation:
    """The request that answers the reply's denied calls upstream, for the next turn."""
    follow = pending.follow
    turn = HiddenTurn(entries, verdict.released_text, visible)
    return Continuation(
        exchange=pending.exchange,
        body=pending.exchange.format.follow_up(pending.upstream_body, entries),
        hidden=[*(follow.hidden if follow else []), turn],
        splice=follow.splice.then(splice) if follow else splice,
        first=first,
        answered=[c.id for c in verdict.removed],
    )


async def keep_alive(conv: Conversation, pending: PendingRelease) -> None:
    """While a response waits for decisions, send what its client skips now and then (an
    SSE comment; whitespace before a JSON body, which then goes out chunked), so the
    client's read timeout does not fire during a long hold."""
    await keep_alive_while(
        conv, pending.exchange, pending.held is not None, lambda: conv.pending is pending
    )


async def keep_alive_while(
    conv: Conversation, exchange: Exchange, streamed: bool, waiting: Callable[[], bool]
) -> None:
    """`keep_alive` for as long as `waiting()` (a hold, or a reply that goes on upstream
    waiting for its turn: a step-mode pause before the proxy's request)."""
    interval = conv.proxy.options.keepalive
    while interval > 0:
        await anyio.sleep(interval)
        if not waiting() or exchange.closed:
            return
        if not streamed and not exchange.ready.is_set():
            exchange.start(200, "application/json")
        exchange.keepalive(KEEPALIVE if streamed else b" ")
