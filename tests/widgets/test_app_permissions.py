"""Pilot tests of the permission modal: approve, deny with a reason, edit, always, cancel."""

from __future__ import annotations

import json

from textual.widgets import Input, TextArea

from tests.widgets.helpers import scenario_of, wait_for
from workbench.agent import AssistantMessage, ToolResultMessage
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.permission_modal import PermissionModal


def results(app) -> dict[str, ToolResultMessage]:  # type: ignore[no-untyped-def]
    return {m.tool_call_id: m for m in app.agent.state.messages if isinstance(m, ToolResultMessage)}


def modal_open(app) -> bool:  # type: ignore[no-untyped-def]
    return isinstance(app.screen, PermissionModal)


async def test_approving_both_asks_runs_the_demo_to_the_end(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        assert app.screen.record.name == "edit_file"
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: modal_open(app) and app.screen.record.name == "run_command")
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=20)
    config = json.loads((app.runtime.workspace / "config.json").read_text())
    assert config["apiBaseUrl"] == "http://127.0.0.1:11434/v1"
    edit = results(app)["call_3_1"]
    assert not edit.is_error
    decision = app.view_state.calls["call_3_1"].decision
    assert decision.decision == "allow" and decision.decided_by == "user"
    assert "passes" in app.agent.state.messages[-1].text


async def test_deny_with_a_reason_reaches_the_model(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        await pilot.press("ctrl+n")
        assert app.screen.focused is app.screen.query_one("#reason", Input)
        await pilot.press(*"not on a Friday")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    denied = results(app)["call_3_1"]
    assert denied.is_error and "not on a Friday" in denied.text
    assert app.view_state.calls["call_3_1"].status == "denied"
    assert "apiBaseUrl" not in (app.runtime.workspace / "config.json").read_text()
    final = app.agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and "not allowed" in final.text


async def test_edit_to_invalid_is_refused_then_valid_edit_runs(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
        editor = app.screen.query_one(TextArea)
        editor.text = json.dumps({"path": "config.json", "edits": "nope"})
        await pilot.press("ctrl+s")
        error = str(app.screen.query_one("#json-error").render())
        assert isinstance(app.screen, JsonEditModal)
        assert "edits" in error and "valid list" in error
        edited = {
            "path": "config.json",
            "edits": [{"old_text": '"temperature": 0.2', "new_text": '"temperature": 0.7'}],
        }
        editor.text = json.dumps(edited)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: modal_open(app) and app.screen.record.name == "run_command")
        await pilot.press("ctrl+n", "enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    text = (app.runtime.workspace / "config.json").read_text()
    assert '"temperature": 0.7' in text and "apiBaseUrl" not in text
    record = app.view_state.calls["call_3_1"]
    assert record.decision.edited_args == edited
    assert record.status == "done"


async def test_always_allow_skips_the_next_modal(make_test_app) -> None:
    scenario = scenario_of(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}
                ]
            },
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "b.txt", "content": "2"}}
                ]
            },
            {"text": "both written"},
        ]
    )
    app = make_test_app(scenario)
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "write two files"
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        await pilot.click("#tool")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        second = app.view_state.calls["call_2_1"]
    assert (app.runtime.workspace / "b.txt").read_text() == "2"
    assert second.request is None
    assert second.decision.decided_by == "session"


async def test_cancel_from_inside_the_modal_aborts_the_run(make_test_app) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.view_state.run_state == "aborted")
        await wait_for(pilot, lambda: not modal_open(app))
    record = app.view_state.calls["call_3_1"]
    assert record.status == "aborted"
    assert results(app)["call_3_1"].is_error
    # the transcript stays valid: every tool call of every assistant message is answered
    answered = set(results(app))
    for message in app.agent.state.messages:
        if isinstance(message, AssistantMessage):
            assert {c.id for c in message.tool_calls} <= answered


async def test_a_protected_path_is_flagged_in_red(make_test_app) -> None:
    from textual.color import Color
    from textual.widgets import Static

    scenario = scenario_of(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": ".git/hooks/pre-commit", "content": "x"},
                    }
                ]
            },
            {"text": "done"},
        ]
    )
    app = make_test_app(scenario)
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "write"
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        assert not app.screen.query("#perm-protected")  # an ordinary call: no warning
        await pilot.click("#tool")  # always allow write_file...
        await wait_for(pilot, lambda: modal_open(app) and app.screen.record.id == "call_2_1")
        warning = app.screen.query_one("#perm-protected", Static)  # ... is asked again, flagged
        assert "Protected path: this call changes .git/hooks/pre-commit" in str(warning.render())
        red, shown = Color.parse(app.current_theme.error), warning.styles.color
        assert max(abs(a - b) for a, b in zip(red.rgb, shown.rgb, strict=True)) <= 2  # $error
        await pilot.press("ctrl+n", "enter")  # deny
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    assert not (app.runtime.workspace / ".git" / "hooks" / "pre-commit").exists()


async def test_the_dialog_and_the_inspector_say_a_built_in_tool_is_built_in(
    make_test_app,
) -> None:
    app = make_test_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: modal_open(app))
        assert str(app.screen.query_one("#perm-desc").render()).startswith("builtin · Edit a")
        assert "  builtin" in app.inspector.plain_lines()[0]  # the call waiting, selected
        await pilot.press("ctrl+c")
