"""Pilot tests: the approval dialog is safe to type into, and says its own keys."""

from __future__ import annotations

from textual.widgets import Button, TextArea

from tests.widgets.helpers import scenario_of, wait_for
from workbench.agent import ToolResultMessage, tool
from workbench.widgets.clear_checkbox import ClearCheckbox
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.permission_modal import PermissionModal

SENTENCES = (
    "use list_directory instead, please!",
    "Allow? No: a A d e p y n q",  # every letter a dialog might bind
)


def write_one(path: str = "a.txt"):  # type: ignore[no-untyped-def]
    return scenario_of(
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "1"}}]},
            {"text": "done"},
        ]
    )


def result(app, call_id: str) -> ToolResultMessage:  # type: ignore[no-untyped-def]
    return next(
        m
        for m in app.agent.state.messages
        if isinstance(m, ToolResultMessage) and m.tool_call_id == call_id
    )


async def open_dialog(app, pilot) -> PermissionModal:  # type: ignore[no-untyped-def]
    app.prompt_bar.input.value = "write a file"
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
    return app.screen


async def test_typing_sentences_into_a_fresh_dialog_decides_nothing_until_enter(
    make_test_app,
) -> None:
    app = make_test_app(write_one())
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        for sentence in SENTENCES:
            # The user starts typing a deny reason without looking where the focus is.
            dialog.reason.value = ""
            dialog.query_one("#perm-args").focus()
            await pilot.press(*sentence)
            assert app.screen is dialog and app.runtime.gate.pending, "typing decided the call"
            assert dialog.reason.value == sentence
            assert not dialog.query_one("#save", ClearCheckbox).value
        # Only Enter, in the reason box, confirms: a denial with what was typed.
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    assert not (app.runtime.workspace / "a.txt").exists()
    denied = result(app, "call_1_1")
    assert denied.is_error and SENTENCES[1] in denied.text


async def test_a_fresh_dialog_focuses_no_button_and_an_enter_does_not_allow(make_test_app) -> None:
    app = make_test_app(write_one())
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert not isinstance(dialog.focused, Button)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog and app.runtime.gate.pending
        # ctrl+y is the deliberate key for "allow once".
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    assert (app.runtime.workspace / "a.txt").read_text() == "1"


async def test_deny_goes_to_the_reason_box_first_and_escape_leaves_it(make_test_app) -> None:
    app = make_test_app(write_one())
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("ctrl+n")
        assert dialog.focused is dialog.reason and app.runtime.gate.pending
        assert "Enter denies" in str(dialog.query_one("#reason-hint").render())
        await pilot.press("escape")
        assert dialog.focused is not dialog.reason and app.screen is dialog
        await pilot.press("ctrl+n", *"not now", "ctrl+n")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    assert "not now" in result(app, "call_1_1").text


async def test_the_dialog_footer_lists_its_own_keys(make_test_app) -> None:
    app = make_test_app(write_one())
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        keys = {
            b.binding.key: b.binding.description
            for b in dialog.active_bindings.values()
            if b.binding.show
        }
        assert (
            keys["ctrl+y"] == "Allow once"
            and keys["ctrl+n"] == "Deny…"
            and keys["f2"] == "Edit args"
        )
        assert "escape" not in keys  # only in the reason box
        dialog.reason.focus()
        await pilot.pause()
        assert "escape" in {b.binding.key for b in dialog.active_bindings.values()}


async def test_the_save_checkbox_looks_different_off_and_on(make_test_app) -> None:
    app = make_test_app(write_one())
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        box = dialog.query_one("#save", ClearCheckbox)
        off = str(box.render())
        await pilot.click("#save")
        assert box.value
        on = str(box.render())
        assert off.startswith("[ ] ") and on.startswith("[x] ")


async def test_a_tool_without_arguments_gets_one_always_button(make_test_app, tmp_path) -> None:
    @tool
    async def ping() -> str:
        """Answer pong."""
        return "pong"

    turns = [{"tool_calls": [{"name": "ping", "arguments": {}}]}, {"text": "ok"}]
    app = make_test_app(scenario_of(turns), tools=[ping], ask=["ping"])
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        labels = [str(b.label) for b in dialog.query(Button) if str(b.label).startswith("Always")]
        assert labels == ["Always allow ping"]


async def test_json_editor_escape_closes_in_one_press_and_ctrl_home_goes_to_the_top(
    make_test_app,
) -> None:
    app = make_test_app(write_one())
    async with app.run_test(size=(140, 44)) as pilot:
        dialog = await open_dialog(app, pilot)
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
        editor = app.screen.query_one(TextArea)
        editor.move_cursor(editor.document.end)
        await pilot.press("ctrl+home")
        assert editor.cursor_location == (0, 0)
        # A raw line break inside a string: the whole problem is said, not "...at".
        editor.text = '{"path": "a\nb"}'
        await pilot.pause()
        error = str(app.screen.query_one("#json-error").render())
        assert (
            "Invalid control character (a tab or line break" in error
            and "line 1, column 12" in error
        )
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is dialog and app.runtime.gate.pending
