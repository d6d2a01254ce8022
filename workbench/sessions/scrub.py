"""The fold of a recorded session at any position, forward or back, at the cost of a turn.

Replay moves through a session in both directions; a fold only goes forward. Going
back (or far ahead) starts from the checkpoint of the last turn start before the
target (`view.checkpoint`) and folds the rest of that turn, so a jump costs the
events of one turn, not the whole session. Checkpoints are taken as the fold first
passes each turn start, and at the end (nothing follows it to change what it holds;
the last event of a run, `agent_end`, carries the whole run's messages, so the end
is worth keeping rather than folding again). If the session reaches back into an earlier turn
(`ViewState.reached_back`) they cannot be trusted, and every move back folds from
the first event again: slower, still exact.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any

from workbench.sessions.log import EventLog, types_of
from workbench.view import checkpoint
from workbench.view.fold import ViewState


class ScrubFold:
    """`state` is always the fold of `events[:position]`; `goto` moves it (a move back
    makes a new state object: read `state` after each move)."""

    def __init__(self, events: Sequence[Any] = ()) -> None:
        self.state = ViewState()
        self.position = 0
        self.checkpoints = [checkpoint.take(ViewState(), 0)]
        self._positions = [0]
        self.trusted = True
        """No event has reached back into an earlier turn (checkpoints hold)."""
        self.attach(events)

    def attach(self, events: Sequence[Any]) -> None:
        """The session's events (after `feed` has folded them as they were read)."""
        self.events = events
        self.turn_starts = [i for i, kind in enumerate(types_of(events)) if kind == "turn_start"]
        self._settle(self.position, take=self.position == len(events) > 0)

    def feed(self, batch: list[Any]) -> None:
        """Fold the next events as the reader decodes them (`read_session(on_batch=...)`),
        so opening a session reads and folds it in one pass; checkpoints as in `goto`."""
        state = self.state
        start = 0
        for i, event in enumerate(batch):
            if event.type == "turn_start" and self.trusted:
                state.apply_all(batch[start:i])
                start = i
                self._settle(state.event_count, take=True)
        state.apply_all(batch[start:])
        self._settle(state.event_count, take=False)

    def goto(self, target: int) -> ViewState:
        """Fold to `target` (clamped to the session) and return the state."""
        target = max(0, min(target, len(self.events)))
        index = bisect_right(self._positions, target) - 1
        start = self._positions[index]
        if target < self.position or start > self.position:
            self.state = checkpoint.restore(self.checkpoints[index])
            self.position = start
        self._fold(self.position, target)
        return self.state

    def _fold(self, start: int, stop: int) -> None:
        """Fold events `start`..`stop`, taking a checkpoint at each turn start not yet seen."""
        state = self.state
        first = bisect_right(self.turn_starts, self._positions[-1])
        cuts = [p for p in self.turn_starts[first:] if start <= p < stop] if self.trusted else []
        for cut in [*cuts, stop]:
            for batch in _batches(self.events, start, cut):
                state.apply_all(batch)
            start = cut
            self._settle(cut, take=cut != stop or cut == len(self.events))

    def _settle(self, position: int, *, take: bool) -> None:
        """The fold is at `position`: take a checkpoint there if asked and still trusted."""
        self.position = position
        if self.state.reached_back:  # earlier turns' objects changed: no checkpoint holds
            self.trusted = False
            del self.checkpoints[1:], self._positions[1:]
        elif take and position > self._positions[-1]:
            self.checkpoints.append(checkpoint.take(self.state, position))
            self._positions.append(position)


def _batches(events: Sequence[Any], start: int, stop: int) -> Iterator[Sequence[Any]]:
    if start >= stop:
        return iter(())
    if isinstance(events, EventLog):
        return events.fold_batches(start, stop)
    return iter((events[start:stop],))
