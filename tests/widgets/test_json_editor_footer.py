"""The JSON editor's footer lists its own keys, not the permission dialog's below it."""

from __future__ import annotations

from tests.widgets.helpers import scenario_of, send, wait_for
from workbench.widgets.footer import Footer
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.permission_modal import PermissionModal


async def test_the_json_editor_says_its_own_keys(make_test_app) -> None:
    turns = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
        {"text": "done"},
    ]
    app = make_test_app(scenario_of(turns))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
        await pilot.pause()
        line = app.screen.query_one(Footer).render_line(0).text
        assert "Apply" in line and "Back" in line
        assert "Allow once" not in line and "Deny" not in line
        await pilot.press("ctrl+c")
