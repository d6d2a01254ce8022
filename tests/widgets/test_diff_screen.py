"""The side-by-side diff screen: the alignment of `workbench diff`, the first divergence
selected, n / p between differences; opened by `workbench diff --screen` and from the
library (m marks A and B, d diffs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from textual.widgets import DataTable, Static

from tests.sessions.helpers import write_session
from workbench.cli.diff import diff_main
from workbench.widgets.diff_screen import DiffApp, DiffScreen
from workbench.widgets.sessions_app import SessionsApp, SessionsScreen

SIZE = (120, 32)


async def wait_for(pilot: Any, condition: Any, timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await pilot.pause(0.02)


def pair(directory: Path) -> tuple[Path, Path]:
    """Two runs: the same call, a different prompt (first) and result (later)."""
    a = write_session(directory / "a.jsonl", "read a.txt", result="alpha\n", reply="It is alpha.")
    b = write_session(
        directory / "b.jsonl", "read a.txt \x1b[2J please", result="beta\n", reply="It is alpha."
    )
    return a, b


def text(screen: DiffScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_the_first_divergence_is_selected_and_n_p_move_between_differences(
    tmp_path: Path,
) -> None:
    app = DiffApp(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.diff
        table = screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        whats = [(row.where, row.what, row.differs) for row in screen.rows]
        assert whats == [
            ("turn 1", "prompt", True),
            ("turn 1", "model text", False),
            ("turn 1", "reply ended", False),
            ("turn 1, call 1 (read_file)", "tool", False),
            ("turn 1, call 1 (read_file)", "raw arguments", False),
            ("turn 1, call 1 (read_file)", "validated arguments", False),
            ("turn 1, call 1 (read_file)", "decision", False),
            ("turn 1, call 1 (read_file)", "result", True),
            ("turn 2", "model text", False),
            ("turn 2", "reply ended", False),
        ]
        assert "first divergence: turn 1: prompt" in text(screen, "#heading")
        assert table.cursor_row == 0 and app.focused is table
        assert "difference 1 of 2" in text(screen, "#status")
        assert "B: read a.txt ␛[2J please" in text(screen, "#detail")  # literal, no escape
        assert table.get_row_at(0)[0].plain == "≠" and table.get_row_at(1)[0].plain == ""

        await pilot.press("n")
        assert table.cursor_row == 7 and "difference 2 of 2" in text(screen, "#status")
        assert "result" in text(screen, "#detail") and "+beta" in text(screen, "#detail")
        await pilot.press("n")
        assert table.cursor_row == 7 and "no later difference" in text(screen, "#status")
        await pilot.press("up", "up")
        assert "this row is the same" in text(screen, "#status")
        await pilot.press("p")
        assert table.cursor_row == 0
        await pilot.press("q")
    assert not app.is_running


async def test_the_same_session_twice_says_so(tmp_path: Path) -> None:
    a, _ = pair(tmp_path)
    app = DiffApp(a, a)
    async with app.run_test(size=SIZE) as pilot:
        table = app.diff.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        assert "the same: every prompt" in text(app.diff, "#heading")
        await pilot.press("n")
        assert "no differences" in text(app.diff, "#status")


async def test_a_file_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    a, _ = pair(tmp_path)
    (tmp_path / "bad.jsonl").write_text("not json\n")
    app = DiffApp(a, tmp_path / "bad.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "cannot diff" in text(app.diff, "#heading"))


async def test_mark_two_sessions_in_the_library_and_d_opens_their_diff(tmp_path: Path) -> None:
    pair(tmp_path)
    app = SessionsApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        sessions = app.sessions
        table = sessions.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        await app.workers.wait_for_complete()  # the index is up to date: no reload to come
        await pilot.pause()
        await pilot.press("d")  # nothing marked yet
        status = sessions.query_one("#status", Static)
        await wait_for(pilot, lambda: "mark two sessions" in str(status.render()))
        first, second = app.shown
        await pilot.press("m", "down", "m")
        assert sessions.marked == [first, second]
        assert [table.get_row_at(r)[0].plain for r in range(2)] == ["A", "B"]
        await pilot.pause()
        shown = [table.render_line(y).text.strip()[:1] for y in (1, 2)]  # 0: the header
        assert shown == ["A", "B"]  # on screen, not only in the cells
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.paths == (first, second)
        await wait_for(pilot, lambda: bool(diff.rows))
        await pilot.press("q")
        assert isinstance(app.screen, SessionsScreen) and app.is_running
        await pilot.press("m")  # unmark B
        assert sessions.marked == [first]


def test_workbench_diff_screen_shows_it_and_keeps_the_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair(tmp_path)
    shown: list[Any] = []
    monkeypatch.setattr(DiffApp, "run", lambda self: shown.append(self.diff))
    assert diff_main([str(a), str(b), "--screen"]) == 1
    assert diff_main([str(a), str(a), "--screen"]) == 0
    assert [s.paths for s in shown] == [(a, b), (a, a)]
    assert shown[0].turns is not None  # read once, by the command


def test_diff_screen_snapshot(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pair(tmp_path)
    monkeypatch.chdir(tmp_path)  # relative paths: the same on every machine
    app = DiffApp(Path("a.jsonl"), Path("b.jsonl"))

    async def run_before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.diff.query_one(DataTable).row_count > 0)
        await pilot.press("n")

    assert snap_compare(app, terminal_size=(110, 30), run_before=run_before)


async def test_the_values_fit_the_screen_and_follow_its_width(tmp_path: Path) -> None:
    """Long values are cut to what the width leaves the A and B columns: the table never
    runs past the screen's edge, and a wider terminal shows more of each value."""
    long = "x" * 300
    a = write_session(tmp_path / "a.jsonl", "read a.txt", result=long + "a", reply="ok")
    b = write_session(tmp_path / "b.jsonl", "read a.txt", result=long + "b", reply="ok")
    app = DiffApp(a, b)
    async with app.run_test(size=(140, 32)) as pilot:
        screen = app.diff
        table = screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        await pilot.pause()
        cut_at_140 = screen.cell_width()
        assert table.virtual_size.width <= table.size.width
        await pilot.resize_terminal(220, 32)
        await wait_for(pilot, lambda: screen.cell_width() > cut_at_140)
        await pilot.pause()
        assert table.virtual_size.width <= table.size.width
        row = screen.differences[0]
        shown = str(table.get_row_at(row)[3])
        assert len(shown) == screen.cell_width() and shown.endswith("…")
        assert table.cursor_row == row  # the selection stays where it was
