"""Replay opens where it starts (the last event, or --at) from its first drawing: the
scrubber never shows event 0 and then jumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sessions.helpers import READ_A, record_run
from workbench.sessions import read_session
from workbench.widgets.replay_app import ReplayApp
from workbench.widgets.scrubber import Scrubber


@pytest.mark.parametrize("at", [None, 3])
async def test_the_first_position_drawn_is_where_the_replay_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int | None
) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    session = read_session(runtime.session_path)
    drawn: list[int] = []
    show = Scrubber.show

    def noted(self, position, *args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(position)
        return show(self, position, *args, **kwargs)

    render = Scrubber.render

    def rendered(self):  # type: ignore[no-untyped-def]
        drawn.append(self.position)
        return render(self)

    monkeypatch.setattr(Scrubber, "show", noted)
    monkeypatch.setattr(Scrubber, "render", rendered)
    app = ReplayApp(session, at=at)
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.settled:
            await pilot.pause(0.02)
    start = len(session.events) if at is None else at
    assert drawn and set(drawn) == {start}  # drawn, and told, only where it starts
