"""The refresh pacing policy, on a clock the test drives."""

from __future__ import annotations

from workbench.widgets.pacing import Pacer


def run_events(pacer: Pacer, count: int, start: float, already: int = 0) -> int:
    """`count` events, the first at `start`; returns the fold's count after them."""
    pacer.arrived(start)
    return already + count


def test_a_model_streaming_is_shown_at_the_full_rate() -> None:
    pacer = Pacer()
    count = run_events(pacer, 3, start=10.0)  # a few tokens in a frame
    pacer.refreshing(count, now=10.033)
    assert not pacer.burst
    assert abs(pacer.delay(now=10.034) - (1 / 30 - 0.001)) < 1e-9
    assert pacer.inspect(10.034, following=True)


def test_a_burst_spaces_refreshes_and_holds_the_inspector_for_a_second() -> None:
    pacer = Pacer()
    count = run_events(pacer, 1_500, start=10.0)  # 45,000 a second
    pacer.refreshing(count, now=10.033)
    assert pacer.burst
    assert pacer.delay(now=10.04) >= 0.49
    assert not pacer.inspect(10.04, following=True)  # the newest call changes too fast
    assert pacer.inspect(10.04, following=False)  # a call the user picked stays live
    assert not pacer.inspect(10.5, following=True)
    assert pacer.inspect(11.04, following=True)  # once a second


def test_a_refresh_that_costs_more_spaces_a_burst_further() -> None:
    pacer = Pacer()
    pacer.painted(0.2)
    pacer.painted(0.2)  # a moving average: 0.15
    count = run_events(pacer, 5_000, start=1.0)
    pacer.refreshing(count, now=1.05)
    assert abs(pacer.delay(now=1.05) - 3.0) < 1e-9  # twenty times the cost, not 0.5 s
    for _ in range(8):
        pacer.painted(0.01)  # cheap refreshes (a small screen): 0.5 s apart again
    count = run_events(pacer, 5_000, start=4.0, already=count)
    pacer.refreshing(count, now=4.05)
    assert pacer.burst
    assert abs(pacer.delay(now=4.05) - 0.5) < 1e-9


def test_the_burst_ends_when_events_slow_down() -> None:
    pacer = Pacer()
    count = run_events(pacer, 5_000, start=1.0)
    pacer.refreshing(count, now=1.1)
    assert pacer.burst
    count = run_events(pacer, 10, start=1.7, already=count)  # the model again
    pacer.refreshing(count, now=1.8)
    assert not pacer.burst
    assert pacer.inspect(1.8, following=True)


def test_a_handful_of_events_after_a_quiet_spell_is_no_burst() -> None:
    pacer = Pacer()
    count = run_events(pacer, 40, start=5.0)  # one quick batch
    pacer.refreshing(count, now=5.001)
    assert not pacer.burst  # too few to matter, however fast


def test_a_flood_that_ends_in_a_pause_or_a_question_is_shown_in_full_at_once() -> None:
    pacer = Pacer()
    count = run_events(pacer, 5_000, start=1.0)
    pacer.refreshing(count, now=1.05, waiting=True)  # the agent now waits on the user
    assert not pacer.burst
    assert pacer.inspect(1.05, following=True)
    assert abs(pacer.delay(now=1.05) - 1 / 30) < 1e-9


def test_a_costly_inspector_is_caught_up_less_often_during_a_burst() -> None:
    pacer = Pacer()
    pacer.painted(0.01)  # a plain refresh: cheap, and not the inspector's cost
    assert pacer.inspect_cost == 0.0
    pacer.painted(0.3, inspected=True)
    pacer.painted(0.3, inspected=True)  # a moving average: 0.225
    count = run_events(pacer, 5_000, start=1.0)
    pacer.refreshing(count, now=1.05)
    assert pacer.burst
    assert not pacer.inspect(2.1, following=True)  # a second is not enough any more
    assert not pacer.inspect(5.5, following=True)
    assert pacer.inspect(5.6, following=True)  # twenty times its cost: 4.5 s
    assert pacer.inspect(5.61, following=False)  # a call the user picked stays live
