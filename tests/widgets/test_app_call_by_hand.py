"""Pilot tests of calling a tool by hand: palette -> pick -> fill -> run -> card and
inspector; an asking tool opens the permission dialog; the model never sees it."""

from __future__ import annotations

from textual.widgets import Input, OptionList, TextArea

from tests.widgets.helpers import palette_pick, wait_for
from workbench.widgets.hand_call import HandCallModal, ToolPickerModal
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.permission_modal import PermissionModal


async def open_form(pilot, app, tool: str) -> None:  # type: ignore[no-untyped-def]
    await palette_pick(pilot, app, "Call a tool by hand")
    await wait_for(pilot, lambda: isinstance(app.screen, ToolPickerModal))
    names = [t.name for t in app.screen.tools]
    app.screen.query_one(OptionList).highlighted = names.index(tool)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, HandCallModal))


async def test_palette_pick_fill_run_shows_the_call_as_yours(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await open_form(pilot, app, "read_file")
        assert app.screen.tool.name == "read_file"
        path = app.screen.query(Input).first()
        assert app.screen.focused is path
        await pilot.press(*"config.json")
        await pilot.press("ctrl+y")
        await wait_for(
            pilot,
            lambda: (
                "hand_1" in app.view_state.calls and app.view_state.calls["hand_1"].status == "done"
            ),
        )
        record = app.view_state.calls["hand_1"]
        assert record.by_hand and record.validated["path"] == "config.json"
        assert "pi-minimal-agent" in record.result_text
        timeline = "\n".join(app.timeline.plain_lines())
        assert "called by hand" in timeline and "called by you" in timeline
        inspector = "\n".join(app.inspector.plain_lines())
        assert "hand_1" in inspector and "called by you, by hand" in inspector
        assert app.agent.state.messages == []  # the model never sees it
        assert app.view_state.run_state == "idle"


async def test_raw_json_runs_and_invalid_arguments_are_the_calls_error(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await open_form(pilot, app, "read_file")
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
        app.screen.query_one(TextArea).text = '{"path": 7}'
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: "hand_1" in app.view_state.calls and app.view_state.calls["hand_1"].finished,
        )
        record = app.view_state.calls["hand_1"]
        assert record.status == "invalid" and "path" in (record.arg_error or "")


async def test_an_asking_tool_opens_the_permission_dialog(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await open_form(pilot, app, "run_command")
        await pilot.press(*"echo by-hand")
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
        assert app.screen.record.id == "hand_1"
        assert "called by you, by hand" in app.screen._args_text().plain
        await pilot.press("ctrl+n")
        await pilot.press(*"no")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.calls["hand_1"].finished)
        assert app.view_state.calls["hand_1"].status == "denied"
        assert app.agent.state.messages == []


async def test_a_breakpoint_stops_a_call_by_hand_and_f10_runs_it(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await app.runtime.stepper.add_breakpoint("read_file")
        await open_form(pilot, app, "read_file")
        await pilot.press(*"config.json")
        await pilot.press("ctrl+y")
        await wait_for(
            pilot,
            lambda: (
                app.view_state.pause is not None and app.view_state.pause.tool_call_id == "hand_1"
            ),
        )
        assert app.view_state.calls["hand_1"].status == "paused"
        await pilot.press("f10")
        await wait_for(pilot, lambda: app.view_state.calls["hand_1"].status == "done")


async def test_f8_cancels_a_running_call_by_hand(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await open_form(pilot, app, "run_command")
        await pilot.press(*"sleep 30")
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.calls["hand_1"].status == "running")
        assert app.agent.state.is_streaming
        await pilot.press("f8")
        await wait_for(pilot, lambda: app.view_state.calls["hand_1"].finished)
        assert app.view_state.calls["hand_1"].status == "aborted"
        await wait_for(pilot, lambda: not app.agent.state.is_streaming)
        assert app.agent.state.messages == []
