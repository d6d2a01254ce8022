"""The example in examples/todo_agent runs end to end, headless, from its directory
(the app on it: tests/widgets/test_app_own_agent.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.__main__ import main


def test_the_example_runs_headless_end_to_end(
    todo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--headless", "--approve", "all", "--no-record"]) == 0
    out = capsys.readouterr().out
    for name in ("list_tasks", "summarize", "add_task", "complete_task", "run_checks"):
        assert f"result {name}" in out
    assert "✗ result complete_task" in out and "There is no task 7" in out
    assert out.count("… checked") == 4  # run_checks streamed its progress
    assert "end: 5 turns, 6 tool calls" in out
    tasks = {t["id"]: t for t in json.loads((todo / "tasks.json").read_text())}
    assert tasks[1]["done"] and tasks[4]["title"] == "Write the changelog"
    assert tasks[4]["due"] == "2026-12-04"
