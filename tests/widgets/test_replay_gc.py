"""Replay collects garbage as the live app does (`gc_policy`): the session's fold, alive
for the whole replay, is frozen once the first screen is up, and the collector's
settings are given back when the replay ends."""

from __future__ import annotations

import gc
from pathlib import Path

from tests.sessions.helpers import write_session
from tests.widgets.test_replay_app import SIZE, wait_for
from workbench import gc_policy
from workbench.sessions import read_session
from workbench.widgets.replay_app import ReplayApp


async def test_replay_applies_the_gc_policy_and_restores_it_at_exit(tmp_path: Path) -> None:
    before = gc.get_threshold()
    app = ReplayApp(read_session(write_session(tmp_path / "s.jsonl")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app._gc_thresholds is not None)
        assert gc.get_threshold()[0] == gc_policy.YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
