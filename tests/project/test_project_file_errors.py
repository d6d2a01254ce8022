"""Mistakes in workbench.toml are said plainly, naming the key and the file; its tool
specs are named as the file's, not as --tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.project.config import find_project


def test_an_unknown_key_names_itself_the_file_and_the_nearest_key(tmp_path: Path) -> None:
    (tmp_path / "workbench.toml").write_text('tool = ["agent_tools.py"]\n')
    with pytest.raises(ValueError) as info:
        find_project(tmp_path)
    said = str(info.value)
    assert said.startswith(f"{tmp_path / 'workbench.toml'}:1: unknown key 'tool'")
    assert "did you mean 'tools'?" in said and "Extra inputs" not in said


def test_an_unknown_key_in_a_table_lists_that_tables_keys(tmp_path: Path) -> None:
    (tmp_path / "workbench.toml").write_text('max_turns = 3\n\n[sessions.prune]\nolder = "3d"\n')
    with pytest.raises(ValueError) as info:
        find_project(tmp_path)
    said = str(info.value)
    assert said.startswith(f"{tmp_path / 'workbench.toml'}:4: unknown key 'sessions.prune.older'")
    assert "older_than" in said


def test_a_bad_key_in_pyproject_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.workbench]\ntools = ["a.py"]\nmax_turns = 0\n'
    )
    with pytest.raises(ValueError) as info:
        find_project(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'pyproject.toml'}:6: max_turns: ")


def test_the_files_tool_specs_are_labelled_as_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "workbench.toml").write_text('tools = ["nope.py"]\nscenario = "s.json"\n')
    (tmp_path / "s.json").write_text('{"name": "s", "turns": [{"text": "hi"}]}')
    monkeypatch.chdir(tmp_path)
    assert main(["--headless", "hi", "--no-record"]) == 2
    err = capsys.readouterr().err
    assert "workbench.toml tools nope.py: no such file" in err and "--tools" not in err
