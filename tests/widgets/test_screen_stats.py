"""The one hook benchmarks read: a `ScreenStats` the app fills in when given one."""

from __future__ import annotations

from tests.widgets.helpers import send, wait_for
from workbench.widgets.screen_stats import ScreenStats


async def test_the_app_counts_what_its_screen_did_into_the_stats_it_was_given(
    make_test_app,
) -> None:
    stats = ScreenStats()
    app = make_test_app(approve="all", stats=stats)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        count = app.view_state.event_count
        await wait_for(pilot, lambda: stats.synced == count and stats.painted == stats.refreshes)
        assert stats.events == count  # every bus event went through the timed listener
        assert 0 < stats.refreshes < count and stats.listener_seconds > 0
        assert stats.paint_seconds >= stats.refresh_seconds > 0  # painted after refreshing
        assert stats.layouts > 0


def test_a_difference_of_two_copies_is_the_window_between_them() -> None:
    stats = ScreenStats(events=3, refreshes=1, refresh_seconds=0.5)
    earlier = stats.copy()
    stats.events, stats.refresh_seconds = 10, 0.75
    assert stats - earlier == ScreenStats(events=7, refresh_seconds=0.25)
    assert earlier.events == 3  # a copy, not a view
