"""The inspector shows a raising tool's traceback (its own frames) under its result."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.project.test_tool_exceptions import SCENARIO, TOOLS
from tests.widgets.helpers import scenario_of, send
from workbench.project.tool_specs import load_tools


async def test_the_inspector_shows_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_test_app
) -> None:
    (tmp_path / "user_tools.py").write_text(textwrap.dedent(TOOLS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    tools = load_tools(["user_tools.py"], tmp_path)
    app = make_test_app(scenario_of(SCENARIO["turns"]), tools=tools, allow=["complete_task"])
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        app.select_call("call_1_1")
        await pilot.pause()
        result = " ".join(app.inspector.section_text("Result").split())  # unwrapped
    assert "KeyError: 'no task with id 3'" in result
    assert "traceback (most recent call last)" in result
    assert "line 14, in complete_task" in result and "line 9, in _find" in result
