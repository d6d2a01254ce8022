"""The app says at start which functions of your tools file are not offered, and why."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

from tests.project.test_not_offered import TOOLS
from tests.support.notifications import notifications
from tests.widgets.helpers import scenario_of, wait_for
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app


async def test_the_app_notifies_the_functions_left_out(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "agent_tools.py").write_text(textwrap.dedent(TOOLS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runtime = build_runtime(
        RunOptions(
            scenario=scenario_of([{"text": "hello"}]),
            workspace=tmp_path,
            pace=math.inf,
            tool_specs=["agent_tools.py"],
            project_dir=tmp_path,
            builtin_tools=[],
            record=False,
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: bool(notifications(app)))
        notes = [n for n in notifications(app) if n.title == "Not offered to the model"]
    assert len(notes) == 1
    assert "complete_task (agent_tools.py:10)" in notes[0].message
    assert "no type hint on task_id" in notes[0].message and "lock_it" in notes[0].message
