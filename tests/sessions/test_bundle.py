"""`workbench bundle FILE... --to DIR`: session copies with every blob they need beside
them, which restore and re-run once the folder they were recorded in is gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.sessions.helpers import record_run, write_session
from workbench.__main__ import main
from workbench.session_runs import rerun
from workbench.sessions import read_session

FILES = {
    "name": "files",
    "prompt": "change b",
    "workspace_files": {"a.txt": "alpha\n", "deep/b.bin": "beta\n"},
    "turns": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "deep/b.bin", "content": "gamma\n"}}
            ]
        },
        {"text": "done"},
    ],
}


async def test_a_bundle_restores_and_reruns_without_the_original_store(
    tmp_path: Path, sessions_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime, _ = await record_run(tmp_path / "ws", FILES)
    bundle = tmp_path / "bundle"
    assert main(["bundle", str(runtime.session_path), "--to", str(bundle)]) == 0
    assert "bundled 1 sessions" in capsys.readouterr().out
    shutil.rmtree(sessions_dir)  # the folder it was recorded in, with its blobs, is gone
    copy = bundle / runtime.session_path.name
    assert main(["restore", str(copy), "--turn", "0", "--to", str(tmp_path / "then")]) == 0
    assert (tmp_path / "then" / "deep" / "b.bin").read_text() == "beta\n"
    assert main(["restore", str(copy), "--turn", "end", "--to", str(tmp_path / "after")]) == 0
    assert (tmp_path / "after" / "deep" / "b.bin").read_text() == "gamma\n"
    report = await rerun(read_session(copy), workspace=tmp_path / "again")
    assert not report.differs and "2 files" in report.workspace_note


def test_bundling_twice_is_the_same_and_a_missing_blob_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    runtime, _ = anyio.run(record_run, tmp_path / "ws", FILES)
    path = runtime.session_path
    bundle = tmp_path / "bundle"
    assert main(["bundle", str(path), "--to", str(bundle)]) == 0
    assert main(["bundle", str(path), "--to", str(bundle)]) == 0  # nothing new to copy
    assert "(0 files' contents copied" in capsys.readouterr().out
    other = write_session(tmp_path / "other" / path.name)
    assert main(["bundle", str(other), "--to", str(bundle)]) == 2
    assert "is another file" in capsys.readouterr().err

    shutil.rmtree(path.parent / "blobs")
    assert main(["bundle", str(path), "--to", str(tmp_path / "b2")]) == 2
    err = capsys.readouterr().err
    assert "a file's content is not in any store" in err and "Traceback" not in err
