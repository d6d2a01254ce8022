"""The key-latency benchmark's `--attribute`: which collections ran while a slow key waited."""

from __future__ import annotations

import gc
import weakref

import pytest

from benchmarks.key_latency import Collections

pytestmark = pytest.mark.bench


def test_a_slow_key_lists_the_collections_that_ran_while_it_waited(capsys) -> None:
    collections = Collections()
    collections.spans = [(1.00, 1.30, 2), (1.31, 1.32, 0), (2.00, 2.01, 1)]
    collections.report([(0.95, 1.40), (2.00, 2.05)])  # 450 ms, then 50 ms
    out = capsys.readouterr().out
    assert "generation 2 collections: 1, median 300.0 ms, slowest 300.0 ms" in out
    assert "generation 1 collections: 1" in out
    slow = [line for line in out.splitlines() if line.startswith("key answered")]
    assert slow == [
        "key answered in 450 ms; collections meanwhile: "
        "['generation 2 300 ms', 'generation 0 10 ms']"
    ]


def test_the_callback_times_each_collection_by_generation() -> None:
    collections = Collections()
    collections("start", {"generation": 1})
    collections("stop", {"generation": 1, "collected": 0, "uncollectable": 0})
    ((start, end, generation),) = collections.spans
    assert generation == 1 and 0 <= end - start < 1


def test_collections_before_the_run_are_left_out(capsys) -> None:
    collections = Collections()
    collections.spans = [(0.5, 0.9, 2), (1.0, 1.02, 2)]  # start-up's, then the run's
    collections.run_started = 1.0
    collections.report([])
    assert "generation 2 collections: 1, median 20.0 ms" in capsys.readouterr().out


def test_dead_cycles_frozen_alive_are_counted_and_the_rest_stays_frozen() -> None:
    from benchmarks.key_latency import frozen_garbage
    from workbench import gc_policy

    class Node:
        def __init__(self) -> None:
            self.me = self
            self.payload = bytearray(100_000)

    previous = gc_policy.apply()
    try:
        nodes = [Node() for _ in range(3)]
        watch = weakref.ref(nodes[0])
        gc.freeze()  # as the policy does after a full collection: they are alive
        del nodes  # now dead, but frozen: no collection can see them
        count, size = frozen_garbage()
        assert count >= 6  # three nodes and their __dict__s
        assert size >= 3 * 100_000
        assert gc.get_freeze_count() > 0  # frozen again, as the policy left it
        assert watch() is None  # and they are gone for real
    finally:
        gc_policy.restore(previous)


def test_collections_after_the_run_are_left_out(capsys) -> None:
    collections = Collections()
    collections.spans = [(1.0, 1.02, 2), (5.0, 5.8, 2)]  # the run's, then the count's own
    collections.run_started, collections.run_ended = 1.0, 4.0
    collections.report([])
    assert "generation 2 collections: 1, median 20.0 ms, slowest 20.0 ms" in capsys.readouterr().out
