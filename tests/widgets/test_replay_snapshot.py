"""How the replay screen looks at 100x30 (pytest-textual-snapshot; review any update by eye).

The demo is recorded with the clock frozen (as tests/widgets/test_snapshots.py does), so
every time on screen is stable, then replayed to the arguments that failed validation in
turn 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.sessions.helpers import record_run
from workbench.agent import clock
from workbench.sessions import read_session
from workbench.widgets.replay_app import ReplayApp


@pytest.fixture(autouse=True)
def frozen_clock():  # type: ignore[no-untyped-def]
    clock.set_clock(lambda: 1_790_000_000_000.0)
    yield
    clock.set_clock(None)


def test_replay_screen(snap_compare: Any, tmp_path: Path) -> None:
    async def record() -> Path:
        await record_run(tmp_path / "ws", session=tmp_path / "demo.jsonl")
        return tmp_path / "demo.jsonl"

    app = ReplayApp(read_session(anyio.run(record)), at=0)

    async def run_before(pilot: Any) -> None:
        for key in ("right_square_bracket", "right_square_bracket", "e", "right"):
            await pilot.press(key)
            with anyio.fail_after(10):
                while not app.settled:
                    await pilot.pause(0.02)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
