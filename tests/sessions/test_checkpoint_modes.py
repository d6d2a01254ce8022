"""What a call does to files beyond their bytes: a `chmod +x` is recorded (and
restored), and a symlink it makes is listed as left out, never silently dropped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.sessions.helpers import record_run
from workbench.__main__ import main
from workbench.sessions import read_session
from workbench.sessions.checkpoints import read_records

CHMOD = {
    "name": "chmod",
    "prompt": "make it runnable",
    "workspace_files": {"run.sh": "echo hi\n", "a.txt": "alpha\n"},
    "turns": [
        {
            "tool_calls": [
                {"name": "run_command", "arguments": {"command": "chmod +x run.sh"}},
                {"name": "run_command", "arguments": {"command": "ln -s a.txt link.txt"}},
            ]
        },
        {"text": "Done."},
    ],
}


async def test_chmod_is_restored_and_a_new_symlink_is_listed(tmp_path: Path, capsys: Any) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runtime, _ = await record_run(workspace, CHMOD)
    session = read_session(runtime.session_path)
    changes = [r for _, r in read_records(session) if r.type == "workspace_change"]
    chmod, link = [c for c in changes if c.tool_call_id is not None]
    assert [(f.path, f.mode & 0o111 != 0) for f in chmod.files] == [("run.sh", True)]
    assert [item.path for item in link.left_out] == ["link.txt"]
    assert "symlink" in link.left_out[0].reason

    target = tmp_path / "end"
    assert main(["restore", str(runtime.session_path), "--turn", "end", "--to", str(target)]) == 0
    assert os.access(target / "run.sh", os.X_OK)
    assert "link.txt" in capsys.readouterr().out  # listed as not restored
    before = tmp_path / "start"
    assert main(["restore", str(runtime.session_path), "--turn", "0", "--to", str(before)]) == 0
    assert not os.access(before / "run.sh", os.X_OK)


DIRS = {
    "name": "dirs",
    "prompt": "make room",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "mkdir -p out/deep"}}]},
        {"text": "Done."},
    ],
}


async def test_empty_directories_come_back(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "logs").mkdir(parents=True)
    runtime, _ = await record_run(workspace, DIRS)
    path = str(runtime.session_path)
    assert main(["restore", path, "--turn", "0", "--to", str(tmp_path / "start")]) == 0
    assert (tmp_path / "start" / "logs").is_dir()
    assert not (tmp_path / "start" / "out").exists()
    assert main(["restore", path, "--turn", "end", "--to", str(tmp_path / "end")]) == 0
    assert (tmp_path / "end" / "logs").is_dir() and (tmp_path / "end" / "out" / "deep").is_dir()
