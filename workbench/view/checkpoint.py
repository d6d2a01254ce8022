"""Checkpoints of the view fold at turn starts, kept without copying the state.

The fold only appends items, turns, calls and requests, and once a turn is over no
event changes its objects again (the fold sets `reached_back` when one does, as a
model reusing a call id makes it). So the state at the start of a turn is the
containers as they were then: a checkpoint keeps a reference to each and its
length, copies of the few small fields that change, and copies of what is still
open then (the last turn's record, a message or calls still going). Restoring one
makes a new state from slices of the containers: the earlier turns' objects are
shared, never copied.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
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
    values = {
        field.name: _copied(getattr(state, field.name))
        for field in fields(ViewState)
        if field.name not in _LISTS and field.name not in _DICTS
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
        values,
        open_item,
        copy.deepcopy(state.turns[-1]) if state.turns else None,
        {i: copy.deepcopy(state.calls[i]) for i in state.started if i in state.calls},
    )


def restore(checkpoint: Checkpoint) -> ViewState:
    """A new state: the fold the checkpoint was taken of (the objects of finished
    turns are the same objects, the open ones copies)."""
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
    return ViewState(**values)


def _copied(value: Any) -> Any:
    if isinstance(value, (list, dict, set)):
        return value.copy()
    return value
