"""What the first words on the line mean: a command, a prompt, or a mistake said at once.

A typo'd command never becomes a prompt, a project without a model never plays the demo
in its place, and the app never opens where no one can see or answer it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.cli.main import COMMANDS


def workbench(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        input=stdin,
    )


@pytest.mark.parametrize(
    ("word", "hint"),
    [("halp", "did you mean --help?"), ("replya", "did you mean replay?"), ("dmeo", "demo?")],
)
def test_an_unknown_first_word_is_an_error_with_the_nearest_command(
    word: str, hint: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([word]) == 2
    err = capsys.readouterr().err
    assert f"unknown command {word!r}" in err and hint in err
    assert f"workbench -- {word}" in err  # how to send it as a prompt after all
    assert not list(tmp_path.iterdir())  # nothing ran


def test_a_one_word_prompt_goes_after_a_double_dash_and_a_phrase_is_a_prompt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--headless", "--approve", "all", "--no-record", "--", "halp"]) == 0
    assert main(["list the files", "--headless", "--approve", "all", "--no-record"]) == 0
    assert "unknown command" not in capsys.readouterr().err


def test_every_command_is_known() -> None:
    assert {"demo", "init", "run", "proxy", "replay", "rerun", "export"} <= set(COMMANDS)


def test_a_project_without_a_model_says_so_and_runs_nothing(tmp_path: Path) -> None:
    assert workbench("init", cwd=tmp_path).returncode == 0
    (tmp_path / "agent_tools.py").write_text(
        'def add(a: int, b: int) -> int:\n    """Add."""\n    return a + b\n'
    )
    out = workbench("--headless", "hi", "--no-record", cwd=tmp_path)
    assert out.returncode == 2, out.stdout
    assert "no model is configured in workbench.toml" in out.stderr
    assert "`workbench demo`" in out.stderr and "base_url" in out.stderr
    assert out.stdout == ""  # the demo did not play
    # asked for, the demo runs (its own tools, not the project's)
    demo = workbench("demo", "--headless", "--approve", "all", "--no-record", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "config.json" in demo.stdout and " add(" not in demo.stdout


def test_own_tools_on_the_command_line_without_a_model_are_refused(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text('def add(a: int) -> int:\n    """Add."""\n    return a\n')
    out = workbench("--headless", "hi", "--tools", "t.py", "--no-record", cwd=tmp_path)
    assert out.returncode == 2 and "no model is configured in the command line" in out.stderr


def test_outside_a_project_the_bare_command_is_the_demo(tmp_path: Path) -> None:
    out = workbench("--headless", "--approve", "all", "--no-record", cwd=tmp_path)
    assert out.returncode == 0 and "config.json" in out.stdout


def test_the_app_does_not_open_without_a_terminal(tmp_path: Path) -> None:
    out = workbench("--no-record", cwd=tmp_path, stdin="")
    assert out.returncode == 2 and "the app needs a terminal" in out.stderr
    assert "--headless" in out.stderr
