"""The inspector shows values as what they are: stage panes readable at 120 columns
(stacked when two across would leave each about twenty columns), a string of several
lines as a text block (its JSON form one key away: J), edit_file's diff as a diff."""

from __future__ import annotations

from tests.widgets.helpers import scenario_of, send
from workbench.widgets.tool_inspector import TWO_ACROSS

URL = "http://127.0.0.1:11434/v1"
TURNS = [
    {
        "tool_calls": [
            {
                "name": "write_file",
                "arguments": {"path": "notes.txt", "content": f"base_url = {URL}\nmodel = qwen3"},
            }
        ]
    },
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "notes.txt",
                    "edits": [{"old_text": "qwen3", "new_text": "llama3"}],
                },
            }
        ]
    },
    {"text": "done"},
]


async def test_values_show_as_text_blocks_and_diffs_and_the_stages_fit_at_120(
    make_test_app,
) -> None:
    app = make_test_app(scenario_of(TURNS), approve="all")
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        assert app.inspector.scrollable_content_region.width < TWO_ACROSS  # so: stacked
        app.select_call("call_1_1")
        await pilot.pause()
        lines = app.inspector.plain_lines()
        assert any(URL in line for line in lines)  # whole, on one line
        assert any("│ model = qwen3" in line for line in lines)
        assert any('"content": text, 2 lines' in line for line in lines)
        app.inspector.focus()
        await pilot.press("J")  # the JSON form
        as_json = app.inspector.plain_lines()
        assert any('"content": "base_url =' in line for line in as_json)
        assert not any("text, 2 lines" in line for line in as_json)
        await pilot.press("J")
        app.select_call("call_2_1")
        await pilot.pause()
        result = app.inspector.section_text("Result")
    assert "diff" in result and "-model = qwen3" in result and "+model = llama3" in result
    assert '"diff":' not in result  # not the escaped JSON string
