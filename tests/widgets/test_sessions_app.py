"""The sessions screen: the table fills from the index, search and filters narrow it,
Enter opens a session (`workbench sessions` exits with its path; pushed over another
app, replay runs in the suspended terminal, or the command is said)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from textual.app import App
from textual.widgets import Checkbox, DataTable, Input

from tests.sessions.helpers import write_session
from tests.support.notifications import notifications
from workbench.sessions.library import Filters
from workbench.widgets.sessions_app import Query, SessionsApp, SessionsScreen

SIZE = (120, 30)


async def wait_for(pilot: Any, condition: Any, timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await pilot.pause(0.02)


def cells(app: SessionsApp, column: int) -> list[str]:
    table = app.query_one(DataTable)
    return [table.get_row_at(row)[column].plain for row in range(table.row_count)]


async def test_search_filters_and_enter_opens_the_session(tmp_path: Path) -> None:
    write_session(tmp_path / "old.jsonl", "rename the module", created=1e12)
    write_session(
        tmp_path / "new.jsonl",
        "fix the config \x1b[2J now",
        tool="edit_file",
        is_error=True,
        created=2e12,
    )
    write_session(tmp_path / "denied.jsonl", "delete everything", denied=True, created=1.5e12)
    app = SessionsApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 3)  # indexed in the background
        assert [p.name for p in app.shown] == ["new.jsonl", "denied.jsonl", "old.jsonl"]
        assert "fix the config ␛[2J now" in cells(app, 9)  # literal, never an escape

        await pilot.press("slash")
        assert app.focused is app.query_one("#search", Input)
        await pilot.press(*"config")
        await wait_for(pilot, lambda: table.row_count == 1)
        assert [p.name for p in app.shown] == ["new.jsonl"] and "[config]" in cells(app, 9)[0]

        await pilot.press(*"zzz")
        await wait_for(pilot, lambda: table.row_count == 0)
        assert "0 sessions" in str(app.query_one("#status").render())
        app.query_one("#search", Input).value = ""
        await wait_for(pilot, lambda: table.row_count == 3)

        app.query_one("#denied", Checkbox).value = True
        await wait_for(pilot, lambda: [p.name for p in app.shown] == ["denied.jsonl"])
        app.query_one("#denied", Checkbox).value = False
        app.query_one("#tool", Input).value = "edit_file"
        await wait_for(pilot, lambda: [p.name for p in app.shown] == ["new.jsonl"])
        app.query_one("#tool", Input).value = ""
        app.query_one("#since", Input).value = "soon"  # not a date: said, and ignored
        await wait_for(pilot, lambda: "since ignored" in str(app.query_one("#status").render()))
        assert table.row_count == 3 and "since ignored" in str(app.query_one("#status").render())

        await pilot.press("escape")
        assert app.focused is table
        await pilot.press("down", "enter")  # the second row
    assert app.return_value == tmp_path / "denied.jsonl"
    assert app.query_state.since_text == "soon"


async def test_the_query_comes_back_as_it_was(tmp_path: Path) -> None:
    write_session(tmp_path / "a.jsonl", "fix the config", tool="edit_file", is_error=True)
    write_session(tmp_path / "b.jsonl", "fix the lexer")
    query = Query(search="fix", filters=Filters(tool="edit_file", errors=True))
    app = SessionsApp(tmp_path, query)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        assert app.query_one("#search", Input).value == "fix"
        assert app.query_one("#errors", Checkbox).value is True
        await pilot.press("q")
    assert app.return_value is None


class Host(App[None]):
    """Any app that pushes the screen (as the main app does)."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory

    def on_mount(self) -> None:
        self.push_screen(SessionsScreen(self.directory))


async def test_pushed_over_an_app_enter_says_how_to_replay_and_q_goes_back(
    tmp_path: Path,
) -> None:
    write_session(tmp_path / "one.jsonl", "fix the config")
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        table = screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("enter")  # a headless app cannot be suspended for replay
        await wait_for(pilot, lambda: bool(notifications(app)))
        [note] = list(notifications(app))
        assert f"workbench replay {tmp_path / 'one.jsonl'}" in note.message
        assert "run: workbench replay" in str(screen.query_one("#status").render())
        assert app.screen is screen and app.is_running
        await pilot.press("q")
        assert not isinstance(app.screen, SessionsScreen) and app.is_running


async def test_pushed_over_an_app_enter_suspends_it_and_runs_replay(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from contextlib import contextmanager

    write_session(tmp_path / "one.jsonl", "fix the config")
    ran: list[list[str]] = []
    suspended: list[bool] = []

    @contextmanager
    def suspend(self: App[Any]) -> Any:
        suspended.append(True)
        yield

    monkeypatch.setattr(App, "suspend", suspend)
    monkeypatch.setattr("subprocess.run", lambda command, check: ran.append(command))
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(ran))
        assert suspended == [True]
        assert ran[0][-3:] == ["workbench", "replay", str(tmp_path / "one.jsonl")]
        assert isinstance(app.screen, SessionsScreen)  # back on the list after replay


async def test_pushed_over_the_main_app_and_back(tmp_path: Path, make_test_app: Any) -> None:
    library = tmp_path / "library"
    library.mkdir()
    write_session(library / "one.jsonl", "fix the config")
    app = make_test_app()
    async with app.run_test(size=SIZE) as pilot:
        main = app.screen
        app.push_screen(SessionsScreen(library))
        await wait_for(pilot, lambda: bool(app.screen.query(DataTable)))
        assert isinstance(app.screen, SessionsScreen)
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any("workbench replay" in n.message for n in notifications(app))
        )
        await pilot.press("q")
        assert app.screen is main and app.is_running


async def test_an_index_already_up_to_date_is_listed_at_once(tmp_path: Path) -> None:
    """The second opening finds nothing new to index: the list still shows, column
    widths grown to what they hold."""
    write_session(tmp_path / "a.jsonl", "rename the module", created=1e12)
    write_session(tmp_path / "b.jsonl", "fix the config", created=2e12)
    from workbench.sessions.library import Library

    with Library(tmp_path) as library:
        library.refresh()
    app = SessionsApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        recorded = table.ordered_columns[1]
        assert recorded.get_render_width(table) > len("recorded") + 2  # a whole date
        assert "2 sessions" in str(app.query_one("#status").render())


async def test_file_names_fork_marks_outcomes_failed_calls_and_esc_closes(tmp_path: Path) -> None:
    parent = write_session(tmp_path / "parent.jsonl", "fix it", is_error=True, created=1e12)
    write_session(tmp_path / "child.jsonl", "fix it again", parent=parent, created=2e12)
    write_session(tmp_path / "cut.jsonl", "stopped", finished=False, created=1.5e12)
    app = SessionsApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        assert cells(app, 2) == ["⑂ child.jsonl", "cut.jsonl", "parent.jsonl"]
        assert cells(app, 7) == ["0", "0", "1"]  # failed calls, not error events
        app.query_one("#outcome", Input).value = "incomplete"
        await wait_for(pilot, lambda: [p.name for p in app.shown] == ["cut.jsonl"])
        app.query_one("#outcome", Input).focus()
        await pilot.press("escape")  # from a field: back to the table
        assert app.focused is table and app.is_running
        await pilot.press("escape")  # from the table: closes
    assert app.return_value is None


async def test_more_than_a_thousand_sessions_are_listed_a_thousand_at_a_time(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import workbench.widgets.sessions_app as screen_module

    monkeypatch.setattr(screen_module, "SHOWN", 2)  # the same paging, on five files
    for n in range(5):
        write_session(tmp_path / f"s{n}.jsonl", f"prompt {n}", created=1e12 + n)
    app = SessionsApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        assert "(the first 2: + shows more)" in str(app.query_one("#status").render())
        await pilot.press("plus")
        await wait_for(pilot, lambda: table.row_count == 4)
        await pilot.press("plus")
        await wait_for(pilot, lambda: table.row_count == 5)
        assert "5 sessions in" in str(app.query_one("#status").render())
