"""Runs recording into one sessions folder at once: every run keeps its own file (the
names, the index and the blobs are shared safely), tested with parallel processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.sessions.helpers import READ_A
from workbench.agent import AgentStartEvent
from workbench.sessions import read_session
from workbench.sessions.header import SESSIONS_DIR_ENV, ModelInfo, SessionHeader
from workbench.sessions.recorder import Recorder


def test_a_made_up_name_taken_meanwhile_moves_to_the_next_free_one(tmp_path: Path) -> None:
    proposed = tmp_path / "20260101-000000-demo.jsonl"
    header = SessionHeader(created=0.0, model=ModelInfo(id="m", provider="scripted"))
    recorder = Recorder(proposed, header, lazy=True, unique=True)
    proposed.write_text("another workbench's session\n")  # created between name and file
    (tmp_path / "20260101-000000-demo-2.jsonl").write_text("and another\n")
    recorder.write(AgentStartEvent())
    recorder.close()
    assert recorder.error is None
    assert recorder.path == tmp_path / "20260101-000000-demo-3.jsonl"
    assert proposed.read_text() == "another workbench's session\n"
    assert read_session(recorder.path).events[0].type == "agent_start"


def test_a_name_you_gave_is_never_replaced(tmp_path: Path) -> None:
    given = tmp_path / "mine.jsonl"
    header = SessionHeader(created=0.0, model=ModelInfo(id="m", provider="scripted"))
    recorder = Recorder(given, header, lazy=True)
    given.write_text("x\n")
    recorder.write(AgentStartEvent())
    assert recorder.error is not None and "exists" in recorder.error
    assert given.read_text() == "x\n"


def test_parallel_runs_in_one_folder_each_keep_their_session(tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(READ_A), encoding="utf-8")
    sessions = tmp_path / "sessions"
    env = {**os.environ, SESSIONS_DIR_ENV: str(sessions)}
    command = [sys.executable, "-m", "workbench", "--headless", "--scenario", str(scenario)]
    for round_ in range(2):
        runs = []
        for n in range(3):
            workspace = tmp_path / f"ws-{round_}-{n}"
            workspace.mkdir()
            (workspace / "a.txt").write_text("alpha\n")
            runs.append(
                subprocess.Popen(
                    [*command, "--approve", "all", "--workspace", str(workspace)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for run in runs:
            _out, err = run.communicate(timeout=300)
            assert run.returncode == 0, err
            if "was taken by another run" in err:  # the line names the file it wrote
                assert Path(err.rsplit("session recorded to ", 1)[1].strip()).is_file()
    files = sorted(sessions.glob("*.jsonl"))
    assert len(files) == 6
    for path in files:
        assert read_session(path).events[-1].type == "agent_end"

    listers = [
        subprocess.Popen(
            [sys.executable, "-m", "workbench", "sessions", "--list", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for lister in listers:  # three workbenches indexing the same folder at once
        out, err = lister.communicate(timeout=300)
        assert lister.returncode == 0, err
        assert len(json.loads(out)) == 6
