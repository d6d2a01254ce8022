"""The fold of a recorded session at any position, forward or back, at the cost of a turn.

Replay moves through a session in both directions; a fold only goes forward. Going
back (or far ahead) starts from the checkpoint before the target (`view.checkpoint`)
and folds the rest, so a jump costs the events of one turn, not the whole session.
Checkpoints are taken as the fold first passes each turn start, right after each
run's end (`agent_end`, whose line may refer back to the whole run's messages, see
`sessions.compact`: no jump folds it again), and at the end. If the session reaches
back into an earlier turn (`ViewState.reached_back`) they cannot be trusted, and every
move back folds from the first event again: slower, still exact.
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
        self.turn_starts = cut_points(events)
        """The positions checkpoints are taken at (named for the most of them)."""
        self._settle(self.position, take=self.position == len(events) > 0)

    def feed(self, batch: list[Any]) -> None:
        """Fold the next events as the reader decodes them (`read_session(on_batch=...)`),
        so opening a session reads and folds it in one pass; checkpoints as in `goto`."""
        state = self.state
        start = 0
        for i, event in enumerate(batch):
            kind = event.type
            if kind in _CUT_AFTER and self.trusted:
                cut = i + _CUT_AFTER[kind]
                state.apply_all(batch[start:cut])
                start = cut
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


_CUT_AFTER = {"turn_start": 0, "agent_end": 1}
"""A checkpoint goes before each turn start and after each run's end."""


def cut_points(events: Sequence[Any]) -> list[int]:
    """The positions of the checkpoints `ScrubFold` takes (see `_CUT_AFTER`)."""
    if isinstance(events, EventLog):  # found in the types the log noted
        return sorted(i + after for kind, after in _CUT_AFTER.items() for i in events.where([kind]))
    return [i + _CUT_AFTER[kind] for i, kind in enumerate(types_of(events)) if kind in _CUT_AFTER]


def _batches(events: Sequence[Any], start: int, stop: int) -> Iterator[Sequence[Any]]:
    if start >= stop:
        return iter(())
    if isinstance(events, EventLog):
        return events.fold_batches(start, stop)
    return iter((events[start:stop],))
