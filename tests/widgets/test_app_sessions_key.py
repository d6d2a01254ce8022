"""ctrl+s on the live app's main screen opens the session library over it (issue 23)."""

from __future__ import annotations

from textual.widgets import DataTable

from tests.widgets.helpers import send, wait_for
from workbench.widgets.help_screen import HELP
from workbench.widgets.sessions_app import SessionsScreen


async def test_ctrl_s_opens_the_library_of_where_the_app_records_and_q_comes_back(
    make_test_app,
) -> None:
    app = make_test_app(approve="all")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        recorded = app.runtime.session_path
        assert recorded is not None
        await wait_for(pilot, lambda: recorded.exists())
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        library = app.screen
        assert library.library.directory == recorded.parent
        table = library.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count >= 1)  # this very run is listed
        assert str(recorded) in [str(p) for p in library.shown]
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is app.main)
        await pilot.press("f1")  # the key is in the help, and not bound over a dialog
        await wait_for(pilot, lambda: app.screen is not app.main)
        await pilot.press("ctrl+s")  # (press returns once the app has handled the key)
        await pilot.pause()
        assert not isinstance(app.screen, SessionsScreen)
        commands = [c.title for c in app.get_system_commands(app.main)]
        assert "Sessions (ctrl+s)" in commands
    assert "| ctrl+s |" in HELP
