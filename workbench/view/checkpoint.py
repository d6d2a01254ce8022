"""Checkpoints of the view fold at turn starts, kept without copying the state.

The fold only appends items, turns, calls and requests, and once a turn is over no
event changes its objects again (the fold sets `reached_back` when one does, as a
model reusing a call id makes it). So the state at the start of a turn is the
containers as they were then: a checkpoint keeps a reference to each and its
length, copies of the few small fields that change, and copies of what is still
open then (the last turn's record, a message or calls still going). Restoring one
slices the containers: the earlier turns' objects are shared, never copied, so a
screen drawing them keeps what it drew.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from itertools import islice
from typing import Any

from workbench.view.fold import ViewState

_LISTS = ("items", "turns")
_DICTS = ("calls", "network")


@dataclass
class Checkpoint:
    position: int
    """How many events had been folded."""
    lists: dict[str, tuple[list[Any], int]]
    dicts: dict[str, tuple[dict[str, Any], int]]
    fields: dict[str, Any]
    """Every other field; containers copied."""
    open_item: tuple[int, Any] | None
    """The message still streaming (its index in `items`, a copy), if any."""
    last_turn: Any
    """A copy of the last turn's record (its times are still being set)."""
    open_calls: dict[str, Any]
    """Copies of the calls that had started and not ended."""


def take(state: ViewState, position: int) -> Checkpoint:
    """A checkpoint of `state`, the fold of the first `position` events."""
    fields = {
        name: _copied(value)
        for name, value in state.__dict__.items()
        if name not in _LISTS and name not in _DICTS
    }
    item = state.streaming_item
    open_item = None
    if item is not None:
        index = next(
            (i for i in range(len(state.items) - 1, -1, -1) if state.items[i] is item), None
        )
        open_item = None if index is None else (index, copy.deepcopy(item))
    return Checkpoint(
        position,
        {name: (getattr(state, name), len(getattr(state, name))) for name in _LISTS},
        {name: (getattr(state, name), len(getattr(state, name))) for name in _DICTS},
        fields,
        open_item,
        copy.deepcopy(state.turns[-1]) if state.turns else None,
        {i: copy.deepcopy(state.calls[i]) for i in state.started if i in state.calls},
    )


def restore(checkpoint: Checkpoint, state: ViewState) -> None:
    """Make `state` the fold the checkpoint was taken of (in place: a screen bound to
    `state` stays bound; the objects of finished turns are the same objects)."""
    values: dict[str, Any] = {name: _copied(v) for name, v in checkpoint.fields.items()}
    for name, (items, length) in checkpoint.lists.items():
        values[name] = items[:length]
    for name, (table, length) in checkpoint.dicts.items():
        values[name] = dict(islice(table.items(), length))
    if checkpoint.open_item is not None:
        index, item = checkpoint.open_item
        values["items"][index] = values["streaming_item"] = copy.deepcopy(item)
    elif values.get("streaming_item") is not None:  # not in the items (cannot happen): a copy
        values["streaming_item"] = copy.deepcopy(values["streaming_item"])
    if checkpoint.last_turn is not None:
        values["turns"][-1] = copy.deepcopy(checkpoint.last_turn)
    for call_id, record in checkpoint.open_calls.items():
        values["calls"][call_id] = copy.deepcopy(record)
    state.__dict__.clear()
    state.__dict__.update(values)


def _copied(value: Any) -> Any:
    if isinstance(value, (list, dict, set)):
        return value.copy()
    return value
