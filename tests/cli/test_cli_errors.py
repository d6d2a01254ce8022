"""The command line: mistakes cost one clear line, and headless exit codes say how a run ended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def workbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--workspace", "/nonexistent/dir"], "is not a directory"),
        (["--approve", "maybe"], "invalid choice"),
        (["--headless", "--approve", "ask"], "needs the app"),
        (["--profile", "nope", "--config", "/nonexistent.toml"], "nonexistent.toml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    out = workbench(*args, "--no-record")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_headless_exit_codes(tmp_path: Path) -> None:
    finished = workbench("--headless", "--approve", "all", "--no-record")
    assert finished.returncode == 0, finished.stderr
    assert "Done." in finished.stdout
    unreachable = workbench("--headless", "hi", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--no-record")
    assert unreachable.returncode == 1
    assert "Could not connect" in unreachable.stdout and "Traceback" not in unreachable.stderr
