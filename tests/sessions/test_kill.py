"""A recording process killed with SIGKILL mid-run leaves a file that reads and replays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.sessions import read_session
from workbench.view.fold import fold


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_kill_9_mid_run_then_read_and_replay(tmp_path: Path) -> None:
    session = tmp_path / "killed.jsonl"
    # The demo at 300 characters a second takes several seconds; the check script sleeps too.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "--headless",
            "--approve",
            "all",
            "--pace",
            "300",
            "--session",
            str(session),
            "--workspace",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # kill once the first tool batch is under way
            if session.exists() and b'"tool_execution_end"' in session.read_bytes():
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.01)
        else:
            pytest.fail("the recording never reached a tool call")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        if proc.stderr:
            proc.stderr.close()
    recorded = read_session(session)
    types = [e.type for e in recorded.events]
    assert types[0] == "agent_start" and "tool_execution_end" in types
    assert "agent_end" not in types  # it really died mid-run
    assert all(not w or "last line is incomplete" in w for w in recorded.warnings)
    state = fold(recorded.events)
    assert state.run_state not in ("idle", "finished") and state.calls
    assert any(c.finished for c in state.calls.values())
