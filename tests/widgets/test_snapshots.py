"""How the app looks at its key moments, at 80x24 and 200x60 (pytest-textual-snapshot),
and the inspector's stages at 120x40 and 160x48.

The moments are the ones the README's screenshots show (screenshots/moments.py).
The clock is frozen so durations on screen do not vary between runs; review any
`--snapshot-update` diff by eye before accepting it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from screenshots.moments import MOMENTS, SIZES, Moment, build_app
from workbench.agent import clock


@pytest.fixture(autouse=True)
def frozen_clock():  # type: ignore[no-untyped-def]
    clock.set_clock(lambda: 1_790_000_000_000.0)
    yield
    clock.set_clock(None)


@pytest.mark.parametrize("size_name", list(SIZES))
@pytest.mark.parametrize("moment", MOMENTS, ids=[m.name for m in MOMENTS])
def test_moment(moment: Moment, size_name: str, snap_compare: Any, tmp_path: Path) -> None:
    app = build_app(moment, tmp_path)

    async def run_before(pilot: Any) -> None:
        for box in pilot.app.query(Input):
            box.cursor_blink = False
        await moment.drive(pilot)

    assert snap_compare(app, terminal_size=SIZES[size_name], run_before=run_before)


@pytest.mark.parametrize("size", [(120, 40), (160, 48)], ids=["120x40", "160x48"])
def test_the_stages_at_common_terminal_sizes(
    size: tuple[int, int], snap_compare: Any, tmp_path: Path
) -> None:
    """The stage panes at 120 and 160 columns: stacked, each as wide as the inspector,
    values whole (four across they were about twenty columns each and values were cut
    short); two by two from an inspector of TWO_ACROSS columns (200x60: test_moment)."""
    moment = next(m for m in MOMENTS if m.name == "stages")
    app = build_app(moment, tmp_path)

    async def run_before(pilot: Any) -> None:
        for box in pilot.app.query(Input):
            box.cursor_blink = False
        await moment.drive(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
