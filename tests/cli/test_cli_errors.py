"""The command line: mistakes cost one clear line, and headless exit codes say how a run ended."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def workbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--headless", "--workspace", "/nonexistent/dir"], "is not a directory"),
        (["--approve", "maybe"], "invalid choice"),
        (["--headless", "--approve", "ask"], "needs the app"),
        (["--headless", "--profile", "nope", "--config", "/nonexistent.toml"], "nonexistent.toml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    out = workbench(*args, "--no-record")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def in_terminal(*args: str, timeout: float = 60) -> tuple[int, str]:
    """Run `workbench ARGS` on a pseudo-terminal, as a person would: its exit code and
    everything it wrote (the app's frames and the lines after it)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its stdin, stdout and stderr
        os.execv(sys.executable, [sys.executable, "-m", "workbench", *args])
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([fd], [], [], 0.5)[0]:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(fd)
    if time.monotonic() >= deadline:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--workspace", "/nonexistent/dir", "--no-record"], "/nonexistent/dir is not a directory"),
        (["--profile", "nope", "--config", "/nonexistent.toml", "--no-record"], "nonexistent.toml"),
        (["replay", "/nonexistent.jsonl"], "workbench replay: cannot read /nonexistent.jsonl"),
    ],
)
def test_bad_input_to_the_app_is_one_line_after_it_closes(args: list[str], needle: str) -> None:
    """The app draws its first frame before it reads the project and builds the run (or,
    replaying, reads the session), so a mistake found then closes it (the terminal comes
    back as it was) and is one line."""
    code, output = in_terminal(*args)
    assert code == 2
    assert "\x1b[?1049h" in output  # the app had the screen...
    after = output.rsplit("\x1b[?1049l", 1)[1]  # ...and gave it back before saying why
    lines = [line for line in re.sub(r"\x1b\[[0-9;?<>]*[a-zA-Z]", "", after).splitlines() if line]
    assert len(lines) == 1 and needle in lines[0] and lines[0].startswith("workbench"), after


def test_headless_exit_codes(tmp_path: Path) -> None:
    finished = workbench("--headless", "--approve", "all", "--no-record")
    assert finished.returncode == 0, finished.stderr
    assert "Done." in finished.stdout
    unreachable = workbench(
        "--headless", "hi", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--no-record"
    )
    assert unreachable.returncode == 1
    assert "Could not connect" in unreachable.stdout and "Traceback" not in unreachable.stderr
