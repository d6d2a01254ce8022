"""The app runs under the session GC policy and gives the process its old one back."""

from __future__ import annotations

import gc

from tests.widgets.helpers import wait_for

from workbench import gc_policy


async def test_the_app_applies_the_policy_once_up_and_restores_it_on_exit(make_test_app) -> None:
    before = gc.get_threshold()
    app = make_test_app(approve="all")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: gc.get_threshold()[0] == gc_policy.YOUNG_THRESHOLD)
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
