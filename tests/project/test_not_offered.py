"""Functions of a tools file that cannot be offered to the model are listed at start,
with why: headless on stderr, in the app as a notification. Never silently dropped."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.project.tool_specs import load_tools

TOOLS = '''
import threading


def add_task(title: str) -> str:
    """Add a task."""
    return "added " + title


def complete_task(task_id):
    """Mark a task done (no type hint: not offered)."""
    return "done"


def lock_it(lock: threading.Lock) -> str:
    """A parameter no JSON Schema can hold."""
    return "locked"


def _helper(x):
    return x
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agent_tools.py").write_text(textwrap.dedent(TOOLS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_function_left_out_is_named_with_why(project: Path) -> None:
    notes: list[str] = []
    tools = load_tools(["agent_tools.py"], project, notes)
    assert [t.name for t in tools] == ["add_task"]
    assert len(notes) == 2, notes
    untyped, unsupported = notes
    assert "complete_task (agent_tools.py:10)" in untyped
    assert "no type hint on task_id" in untyped and "start its name with _" in untyped
    assert "lock_it" in unsupported and "not offered" in unsupported
    assert not any("_helper" in n for n in notes)  # private: no tool, nothing to say


def test_headless_says_them_on_stderr(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = {"name": "s", "prompt": "hi", "turns": [{"text": "hello"}]}
    (project / "s.json").write_text(json.dumps(scenario), encoding="utf-8")
    args = ["--headless", "--tools", "agent_tools.py", "--scenario", "s.json", "--no-record"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "workbench: --tools agent_tools.py: complete_task (agent_tools.py:10)" in err
    assert "lock_it" in err
