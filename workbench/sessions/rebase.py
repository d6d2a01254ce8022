"""Move an earlier fold of a session into the objects a screen already shows.

Replay steps back by folding again from the start (cheap), which yields new item
and call-record objects; a timeline bound to the old objects would have to build
every widget again (a second or more on a long session). `rebase` instead copies
the earlier content into the objects on screen. UI-free: it only knows the fold.
"""

from __future__ import annotations

from workbench.view.fold import ViewState


def rebase(shown: ViewState, state: ViewState) -> bool:
    """Give `shown` the content of `state` (an earlier fold of the same session) in place.

    The timeline draws the item and call-record objects of the state it was given and
    redraws one when its `rev` changes, so going back one event would otherwise mean
    building every widget again (a second or more on a long session). The fold only
    appends items and adds calls, so item i of an earlier fold is the same item, and
    a call the same call by id: their content is copied into the objects on screen
    (`rev` then differs, which redraws them). The timeline's views never remove parts,
    so when an item loses blocks or its failure (going back past where they appeared)
    this returns False and changes nothing: the caller starts the timeline afresh.
    """
    if len(state.items) < len(shown.items):
        return False
    for old, new in zip(shown.items, state.items, strict=False):
        if (
            old.kind != new.kind
            or old.stop_reason != new.stop_reason
            or [b.kind for b in old.blocks] != [b.kind for b in new.blocks]
        ):
            return False
    current = next((i for i, item in enumerate(state.items) if item is state._assistant), None)
    for i, old in enumerate(shown.items):
        if old != state.items[i]:
            old.__dict__.update(state.items[i].__dict__)
        state.items[i] = old
    if current is not None:
        state._assistant = state.items[current]
    for call_id, record in list(state.calls.items()):
        old_record = shown.calls.get(call_id)
        if old_record is not None:
            if old_record != record:
                old_record.__dict__.update(record.__dict__)
            state.calls[call_id] = old_record
    shown.__dict__.update(state.__dict__)
    return True
