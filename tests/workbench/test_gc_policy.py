"""The session's garbage-collection policy is applied and undone exactly."""

from __future__ import annotations

import gc

import pytest

from workbench import gc_policy


def test_apply_freezes_and_raises_the_young_threshold_and_restore_undoes_both() -> None:
    before = gc.get_threshold()
    previous = gc_policy.apply()
    try:
        assert previous == before
        assert gc.get_threshold() == (gc_policy.YOUNG_THRESHOLD, *gc_policy.OLDER_THRESHOLDS)
        assert gc.get_freeze_count() > 0
    finally:
        gc_policy.restore(previous)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_context_manager_restores_on_error_too() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), gc_policy.session_gc():
        assert gc.get_threshold()[0] == gc_policy.YOUNG_THRESHOLD
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cyclic_garbage_made_during_a_session_is_still_collected() -> None:
    class Node:
        pass

    with gc_policy.session_gc():
        node = Node()
        node.self = node  # a cycle: only the collector frees it
        del node
        assert gc.collect() >= 1


def test_what_survives_a_full_collection_is_frozen_so_later_ones_skip_it() -> None:
    """A full collection walks only what the session made since the last one: its
    pause does not grow with the session."""
    with gc_policy.session_gc():
        kept = [[i] for i in range(5_000)]  # alive: the session's transcript, say
        frozen_before = gc.get_freeze_count()
        gc.collect()
        assert gc.get_freeze_count() >= frozen_before + len(kept)
        tracked = {id(o) for o in gc.get_objects()}  # what a collection would walk
        assert not any(id(item) in tracked for item in kept)
    assert gc.get_freeze_count() == 0  # handed back to the collector
    gc.collect()
    assert gc.get_freeze_count() == 0  # and collections outside a session freeze nothing
