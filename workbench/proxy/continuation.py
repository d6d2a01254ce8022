"""A reply whose calls were all denied goes on in the same turn.

The agent must not get a reply that ends for nothing (a structured-output client
would fail on it, and the model would learn of the denial only when the user
speaks again). So when every call of a reply is removed, the proxy answers those
calls upstream itself: it sends the request again with the model's reply and a
denial for each call appended (`WireFormat.follow_up`), and the model's answer,
its continuation, goes to the agent as the rest of the reply it is waiting for.
The continuation is a turn like any other: its calls are judged, and if they are
all denied again, it goes on once more, up to `MAX_HIDDEN` times in a row.

The agent's copy of the reply holds what the model's replies showed it (their
text, not their calls). On the agent's next request the proxy puts the hidden
turns back where its copy begins (`HiddenTurn`, in `Repair.hidden`), so the
upstream sees the very messages it saw when it wrote the continuation.

A reply with some calls allowed is not continued: the agent must run those, so the
denied ones are answered with its next request (`Repair`), next to its own results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.proxy.formats.base import Splice
from workbench.proxy.wire import HiddenTurn, JsonDict

if TYPE_CHECKING:
    from workbench.proxy.exchange import Exchange

MAX_HIDDEN = 4
"""Replies answered by the proxy in a row for one request; the next reply whose calls
are all denied goes to the agent with the notice (`Verdict.notice`)."""


@dataclass
class Continuation:
    """The agent's request whose reply goes on: what was sent upstream, what it has."""

    exchange: Exchange
    body: JsonDict
    """The request to send upstream next (the last one, with the hidden turn appended)."""
    hidden: list[HiddenTurn] = field(default_factory=list)
    splice: Splice = field(default_factory=Splice)
    """A streamed reply: where the continuation's events go."""
    first: JsonDict | None = None
    """A whole reply: what the agent will get before the continuation (joined to it)."""
    answered: list[str] = field(default_factory=list)
    """The calls the last hidden turn answered with their denial (to name them)."""

    @property
    def text(self) -> str:
        """The text the agent's reply holds so far."""
        return "".join(t.text for t in self.hidden)

    def note(self) -> str:
        return (
            f"sent by the proxy: the denied calls ({', '.join(self.answered)}) answered "
            "with their denial; the model's answer goes to the agent as the rest of its reply"
        )

    def send(self, piece: bytes) -> None:
        """One piece of the continuation's stream, as the agent's reply goes on."""
        for out in self.exchange.format.splice_piece(piece, self.splice):
            self.exchange.send(out)


def can_continue(previous: Continuation | None, sent: dict[str, Any]) -> bool:
    """Whether a reply whose calls were all removed may go on upstream: none of its calls
    reached the agent in part, and not too many replies went on in a row."""
    return not sent and (previous is None or len(previous.hidden) < MAX_HIDDEN)
