"""The command line: flags and subcommands in --help, one-line errors, headless records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.sessions import read_session


def test_help_lists_the_session_flags_and_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for text in (
        "--session FILE",
        "--no-record",
        "workbench replay FILE",
        "workbench rerun FILE",
        "workbench export FILE --format md|json",
    ):
        assert text in " ".join(out.split()), text
    for command in ("replay", "rerun", "export"):
        with pytest.raises(SystemExit) as exc:
            main([command, "--help"])
        assert exc.value.code == 0
        assert f"usage: workbench {command}" in capsys.readouterr().out


def test_bad_session_files_give_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({"format": "agent-workbench-session", "version": 99}) + "\n")
    for command in (["replay"], ["rerun"], ["export", "--format", "md"]):
        for path, message in ((tmp_path / "missing.jsonl", "cannot read"), (future, "version 99")):
            assert main([command[0], str(path), *command[1:]]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_headless_records_and_says_where(tmp_path: Path, sessions_dir: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "workbench", "--headless", "--approve", "all", "--scenario", "demo"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert run.returncode == 0, run.stderr
    [path] = sessions_dir.glob("*-demo.jsonl")
    assert f"recording the session to {path}" in run.stderr
    assert read_session(path).events[-1].type == "agent_end"


def test_an_existing_session_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken.jsonl"
    taken.write_text("x\n")
    assert main(["--headless", "--session", str(taken)]) == 2
    assert capsys.readouterr().err == f"workbench: session file {taken} already exists\n"


def test_no_record_records_nothing(tmp_path: Path, sessions_dir: Path) -> None:
    assert (
        main(["--headless", "--approve", "all", "--no-record", "--workspace", str(tmp_path)]) == 0
    )
    assert not sessions_dir.exists()
