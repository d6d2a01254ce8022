"""A tool that raises: the model reads the exception's type and message; the
inspector, the session file and the export keep the traceback's last frames in the
tool's own file."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.agent import ToolResultMessage
from workbench.sessions.reader import read_session

TOOLS = '''
TASKS = {1: "Fix the login bug"}


def _find(task_id: int) -> str:
    try:
        return TASKS[task_id]
    except KeyError:
        raise KeyError(f"no task with id {task_id}") from None


def complete_task(task_id: int) -> str:
    """Mark a task done."""
    return "done: " + _find(task_id)
'''

SCENARIO = {
    "name": "raises",
    "prompt": "complete task 3",
    "turns": [
        {"tool_calls": [{"name": "complete_task", "arguments": {"task_id": 3}}]},
        {"text": "It failed."},
    ],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "user_tools.py").write_text(textwrap.dedent(TOOLS), encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_model_gets_type_and_message_and_the_session_and_export_the_traceback(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = project / "run.jsonl"
    args = ["--headless", "--tools", "user_tools.py", "--scenario", "s.json", "--approve", "all"]
    assert main([*args, "--session", str(session)]) == 0
    results = [
        e.message
        for e in read_session(session).events
        if getattr(e, "type", "") == "message_end" and isinstance(e.message, ToolResultMessage)
    ]
    assert [r.text for r in results] == ["KeyError: 'no task with id 3'"]
    trace = results[0].details["traceback"]
    assert 'user_tools.py", line 9, in _find' in trace
    assert 'user_tools.py", line 14, in complete_task' in trace
    assert 'raise KeyError(f"no task with id {task_id}") from None' in trace
    assert "workbench/agent" not in trace and "anyio" not in trace  # only the tool's own frames
    capsys.readouterr()
    assert main(["export", str(session), "--format", "md"]) == 0
    exported = capsys.readouterr().out
    assert "Traceback (the tool's own frames):" in exported
    assert 'user_tools.py", line 9, in _find' in exported
