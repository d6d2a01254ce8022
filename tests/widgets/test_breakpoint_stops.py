"""Pilot tests: breakpoints at every failure, what a stop shows, and the keys there."""

from __future__ import annotations

import json

from textual.widgets import TextArea

from tests.support.notifications import notifications
from tests.widgets.helpers import scenario_of, send, wait_for
from workbench.agent import ToolResultMessage
from workbench.widgets.inject_modal import InjectResultModal
from workbench.widgets.json_editor import JsonEditModal

BROKEN = [
    {
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": "missing.md"}},
            {"name": "read_file", "raw": '{"path": "a.txt"'},
            {"name": "read_fil", "arguments": {"path": "a.txt"}},
        ]
    },
    {"text": "done"},
]


def app_with(make_test_app, *breakpoints: str):  # type: ignore[no-untyped-def]
    return make_test_app(
        scenario_of(BROKEN, workspace_files={"a.txt": "hello"}), breakpoints=list(breakpoints)
    )


def paused_at(app, call_id: str) -> bool:  # type: ignore[no-untyped-def]
    pause = app.view_state.pause
    return pause is not None and pause.tool_call_id == call_id


def result(app, call_id: str) -> ToolResultMessage:  # type: ignore[no-untyped-def]
    return next(
        m
        for m in app.agent.state.messages
        if isinstance(m, ToolResultMessage) and m.tool_call_id == call_id
    )


def notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(n.message) for n in notifications(app)]


def card(app, call_id: str) -> str:  # type: ignore[no-untyped-def]
    lines = app.timeline.plain_lines()
    start = app.timeline.line_of(call_id)
    return "\n".join(lines[start : start + 2])


async def test_at_an_error_stop_the_real_result_shows_and_ctrl_o_replaces_it(make_test_app) -> None:
    app = app_with(make_test_app, "@error")
    async with app.run_test(size=(160, 48)) as pilot:
        # A parallel batch: the two calls that cannot run end first, each an error result.
        await send(pilot, app, lambda: paused_at(app, "call_1_2"))
        assert "Invalid JSON in arguments" in app.inspector.section_text("Result")
        await pilot.press("f5")
        await wait_for(pilot, lambda: paused_at(app, "call_1_3"))
        assert "Tool read_fil not found" in app.inspector.section_text("Result")
        await pilot.press("f5")
        await wait_for(pilot, lambda: paused_at(app, "call_1_1"))
        assert app.selected_id == "call_1_1"
        assert "stopped at its error result (not sent yet): File not found: missing.md" in card(
            app, "call_1_1"
        )
        shown = app.inspector.section_text("Result")
        assert "File not found: missing.md" in shown and "the model has not seen it" in shown
        await pilot.press("f2")  # cannot act here: says why
        assert any("ctrl+o replaces its error result" in n for n in notices(app))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, InjectResultModal))
        assert app.screen.replacing
        app.screen.query_one(TextArea).text = "There is no missing.md; try a.txt"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        replaced = result(app, "call_1_1")
        assert replaced.injected and replaced.text == "There is no missing.md; try a.txt"
        assert "injected by you" in card(app, "call_1_1")
        app.select_call("call_1_1")
        await pilot.pause()
        assert "injected by you in place of its error result" in " ".join(
            app.inspector.section_text("Result").split()
        )


async def test_at_malformed_json_f2_edits_and_the_pipeline_runs_again(make_test_app) -> None:
    app = app_with(make_test_app, "@parse")
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: paused_at(app, "call_1_2"))
        assert "stopped at its failed arguments: Invalid JSON" in card(app, "call_1_2")
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
        editor = app.screen.query_one(TextArea)
        editor.text = json.dumps({"path": 5})  # still invalid: refused, and the stop stays
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, JsonEditModal) and paused_at(app, "call_1_2")
        assert "path: Input should be a valid string" in str(
            app.screen.query_one("#json-error").render()
        )
        editor.text = json.dumps({"path": "a.txt"})
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        assert result(app, "call_1_2").text == "hello"  # it ran with the edit
        shown = card(app, "call_1_2")
        assert "✎ edited by you" in shown and '{"path": "a.txt"' in shown
        app.select_call("call_1_2")
        await pilot.pause()
        inspector = "\n".join(app.inspector.plain_lines())
        assert '{"path": "a.txt"' in inspector  # the model's raw string, one glance away
        assert "edited by you in failed arguments" in inspector


async def test_invalid_covers_the_unknown_tool_where_f2_and_ctrl_o_say_why(make_test_app) -> None:
    app = app_with(make_test_app, "@invalid")
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: paused_at(app, "call_1_2"))
        await pilot.press("f10")
        await wait_for(pilot, lambda: paused_at(app, "call_1_3"))
        assert app.view_state.pause.breakpoint == "@invalid"
        await pilot.press("f2")
        await pilot.press("ctrl+o")
        said = notices(app)
        assert any("There is no tool 'read_fil'" in n for n in said)
        assert any("Its arguments failed: F2 edits them" in n for n in said)
        assert not isinstance(app.screen, (JsonEditModal, InjectResultModal))
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        await pilot.press("f10")  # not paused any more: says so
        assert any("The run is not paused" in n for n in notices(app))


async def test_a_pause_selects_its_call_even_after_a_manual_selection(make_test_app) -> None:
    turns = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "read_fil", "arguments": {"path": "a.txt"}},
            ]
        },
        {"text": "done"},
    ]
    app = make_test_app(
        scenario_of(turns, workspace_files={"a.txt": "hello"}),
        breakpoints=["read_file", "@unknown"],
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: paused_at(app, "call_1_1"))
        app.select_call("call_1_1")  # the user picks a card: the inspector stops following
        assert not app.follow_latest
        await pilot.press("f5")
        await wait_for(pilot, lambda: paused_at(app, "call_1_2"))
        await pilot.pause()
        assert app.selected_id == "call_1_2"
        assert app.inspector.record.id == "call_1_2"
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
