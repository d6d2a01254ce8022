"""Under a dialog, running calls' times tick once a second, not at the full rate: a
change below a modal screen recomposes the whole modal (its dimmed background too),
and at the full rate those redraws took the loop from the keys typed into the dialog."""

from __future__ import annotations

from tests.widgets.helpers import scenario_of, send
from workbench.widgets.app import TICKS_UNDER_A_DIALOG
from workbench.widgets.permission_modal import PermissionModal


async def test_times_tick_once_a_second_under_a_dialog_and_at_full_rate_without(
    make_test_app, monkeypatch
) -> None:
    turns = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
        {"text": "ok"},
    ]
    app = make_test_app(scenario_of(turns))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        assert app.view_state.pending_calls  # the call waiting for approval ticks
        scheduled: list[int] = []
        monkeypatch.setattr(app, "_schedule_refresh", lambda *a: scheduled.append(1))
        for _ in range(TICKS_UNDER_A_DIALOG * 3):
            app._tick()
        assert len(scheduled) == 3
        main = app.screen_stack[-2]
        monkeypatch.setattr(type(app), "screen", property(lambda self: main))
        scheduled.clear()
        for _ in range(TICKS_UNDER_A_DIALOG):
            app._tick()
        assert len(scheduled) == TICKS_UNDER_A_DIALOG
