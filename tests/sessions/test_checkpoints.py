"""Workspace checkpoints: the blob store, what a run records, and restoring any turn."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.sessions.helpers import record_run, write_session
from workbench.cli.restore import restore_main
from workbench.sessions import read_session
from workbench.sessions.blobs import BlobError, BlobStore, digest, store_for
from workbench.sessions.checkpoints import (
    CheckpointError,
    read_records,
    restore_workspace,
    workspace_at,
)
from workbench.workspace_scan import CheckpointCaps

EDITS = {
    "name": "edits",
    "prompt": "change things",
    "workspace_files": {"a.txt": "alpha\n", "old.txt": "old\n", "run.sh": "echo hi\n"},
    "turns": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "new.txt", "content": "one"}}
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "a.txt", "old_text": "alpha", "new_text": "beta"},
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "run_command",
                    "arguments": {
                        "command": "rm old.txt && echo made > made.txt && echo more >> a.txt"
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "Done."},
    ],
}


def files_in(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def edited_session(tmp_path: Path, **options: object) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "run.sh").write_text("echo hi\n")
    os.chmod(workspace / "run.sh", 0o755)
    runtime, _ = await record_run(workspace, EDITS, **options)
    runtime.recorder.close()
    assert runtime.session_path is not None
    return runtime.session_path


# -- the blob store ------------------------------------------------------------------------


def test_the_same_content_is_stored_once_and_read_back_checked(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    first = store.put(b"hello")
    assert store.put(b"hello") == first == digest(b"hello")
    assert store.size() == (1, 5)
    assert store.path(first) == tmp_path / "blobs" / first[:2] / first[2:]
    assert store.get(first) == b"hello"
    store.path(first).write_bytes(b"changed")
    with pytest.raises(BlobError, match="damaged"):
        store.get(first)
    with pytest.raises(BlobError, match="not a blob name"):
        store.path("../../etc/passwd")
    with pytest.raises(BlobError, match="is not in"):
        store.get(digest(b"never stored"))


def test_a_failed_write_leaves_no_blob_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = BlobStore(tmp_path / "blobs")

    def fail(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        store.put(b"data")
    assert not store.has(digest(b"data"))
    assert [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()] == []


def test_two_writers_of_the_same_content_end_with_one_whole_blob(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = os.urandom(1 << 20)
    threads = [threading.Thread(target=store.put, args=(data,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.size() == (1, len(data)) and store.get(digest(data)) == data


# -- what a run records ---------------------------------------------------------------------


async def test_a_run_records_its_files_each_write_and_edit_and_what_a_command_changed(
    tmp_path: Path,
) -> None:
    path = await edited_session(tmp_path)
    session = read_session(path)
    assert session.warnings == []
    records = [r for _, r in read_records(session)]
    assert [(r.type, getattr(r, "cause", None)) for r in records] == [
        ("workspace_manifest", None),
        ("workspace_change", "write_file"),
        ("workspace_change", "edit_file"),
        ("workspace_change", "run_command"),
    ]  # reading a file records nothing
    manifest, write, edit, command = records
    assert {f.path: f.size for f in manifest.files} == {"a.txt": 6, "old.txt": 4, "run.sh": 8}
    assert {f.path: f.mode for f in manifest.files}["run.sh"] == 0o755
    assert [(f.path, f.size) for f in write.files] == [("new.txt", 3)]
    assert [f.path for f in edit.files] == ["a.txt"] and edit.tool_call_id
    changed = {f.path: f.blob for f in command.files}
    assert changed.keys() == {"a.txt", "made.txt", "old.txt"} and changed["old.txt"] is None
    store = store_for(path)
    assert store.get(changed["made.txt"]) == b"made\n"
    assert all(r.type not in ("workspace_manifest", "workspace_change") for r in session.events)


async def test_a_second_run_records_what_a_person_changed_in_between(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runtime, _ = await record_run(workspace, EDITS)
    (workspace / "by-hand.txt").write_text("typed\n")
    await runtime.agent.prompt("again")
    runtime.recorder.close()
    records = [r for _, r in read_records(read_session(runtime.session_path))]
    between = [r for r in records if getattr(r, "cause", "") == "between runs"]
    assert [f.path for f in between[0].files] == ["by-hand.txt"]
    assert sum(r.type == "workspace_manifest" for r in records) == 1


async def test_caps_and_ignored_directories_are_named_with_their_reasons(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref")
    (workspace / "vendor" / ".git").mkdir(parents=True)
    (workspace / "node_modules" / "x").mkdir(parents=True)
    (workspace / "big.bin").write_bytes(b"x" * 100)
    (workspace / "link").symlink_to("/etc/passwd")
    caps = CheckpointCaps(max_file_bytes=50)
    path = await edited_session(tmp_path, checkpoints=caps)
    session = read_session(path)
    manifest = read_records(session)[0][1]
    reasons = {item.path: item.reason for item in manifest.left_out}
    assert "per-file cap (100 > 50 bytes)" in reasons["big.bin"]
    assert reasons[".git/"].startswith("the workbench's rules and git's internals")
    assert reasons["vendor/.git/"] == reasons[".git/"]
    assert reasons["node_modules/"].startswith("a dependency or cache")
    assert reasons["link"].startswith("a symlink")
    assert "big.bin" not in {f.path for f in manifest.files}
    state = workspace_at(session, 0)
    assert set(state.incomplete) == {"big.bin"}


async def test_a_walk_stops_at_max_files_with_a_note(tmp_path: Path) -> None:
    path = await edited_session(tmp_path, checkpoints=CheckpointCaps(max_files=2))
    manifest = read_records(read_session(path))[0][1]
    assert len(manifest.files) == 2
    assert manifest.notes == [
        "the walk stopped after 2 files (max_files); files after that are not recorded"
    ]


async def test_the_total_cap_leaves_out_the_files_past_it(tmp_path: Path) -> None:
    path = await edited_session(tmp_path, checkpoints=CheckpointCaps(max_total_bytes=9))
    manifest = read_records(read_session(path))[0][1]
    assert [f.path for f in manifest.files] == ["a.txt"]  # 6 bytes; old.txt's 4 would pass 9
    assert {i.path for i in manifest.left_out} == {"old.txt", "run.sh"}
    assert "max_total_bytes" in manifest.notes[0]


async def test_checkpoints_can_be_turned_off(tmp_path: Path) -> None:
    path = await edited_session(tmp_path, checkpoints=CheckpointCaps(enabled=False))
    session = read_session(path)
    assert session.records == [] and not (path.parent / "blobs").exists()


# -- restore ---------------------------------------------------------------------------------


async def test_restore_writes_the_workspace_of_any_turn(tmp_path: Path) -> None:
    session = read_session(await edited_session(tmp_path))
    start = {"a.txt": "alpha\n", "old.txt": "old\n", "run.sh": "echo hi\n"}
    expected = {
        0: start,
        1: start,
        2: {**start, "new.txt": "one"},
        3: {**start, "new.txt": "one", "a.txt": "beta\n"},
        4: {"a.txt": "beta\nmore\n", "new.txt": "one", "run.sh": "echo hi\n", "made.txt": "made\n"},
    }
    expected["end"] = expected[5] = expected[4]
    for turn, files in expected.items():
        dest = tmp_path / f"turn-{turn}"
        done = restore_workspace(session, turn, dest)
        assert files_in(dest) == files, turn
        assert done.written == len(files)
        assert os.stat(dest / "run.sh").st_mode & 0o777 == 0o755


async def test_restore_refuses_a_full_directory_unless_forced_and_then_deletes_later_files(
    tmp_path: Path,
) -> None:
    session = read_session(await edited_session(tmp_path))
    dest = tmp_path / "out"
    restore_workspace(session, "end", dest)
    (dest / "mine.txt").write_text("not the session's")
    with pytest.raises(CheckpointError, match="is not empty"):
        restore_workspace(session, 1, dest)
    done = restore_workspace(session, 1, dest, force=True)
    assert sorted(done.deleted) == ["made.txt", "new.txt"]
    assert files_in(dest) == {
        "a.txt": "alpha\n",
        "old.txt": "old\n",
        "run.sh": "echo hi\n",
        "mine.txt": "not the session's",
    }
    with pytest.raises(CheckpointError, match="has turns 1 to 5"):
        restore_workspace(session, 6, tmp_path / "never")
    assert not (tmp_path / "never").exists()


async def test_a_missing_blob_fails_before_anything_is_written(tmp_path: Path) -> None:
    path = await edited_session(tmp_path)
    session = read_session(path)
    gone = next(f for f in read_records(session)[1][1].files)
    assert gone.blob is not None
    store_for(path).path(gone.blob).unlink()
    with pytest.raises(CheckpointError, match="new.txt .* is not in"):
        restore_workspace(session, "end", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_session_from_before_checkpoints_says_so(tmp_path: Path) -> None:
    session = read_session(write_session(tmp_path / "old.jsonl"))
    assert session.records == [] and len(session.events) == 13
    with pytest.raises(CheckpointError, match="recorded before checkpoints existed"):
        restore_workspace(session, 0, tmp_path / "out")


def test_a_session_cannot_restore_outside_the_directory_or_into_git(tmp_path: Path) -> None:
    from workbench.sessions.recorder import Recorder
    from workbench.sessions.workspace_records import FileEntry, WorkspaceManifest

    blob = BlobStore(tmp_path / "blobs").put(b"evil")
    path = write_session(tmp_path / "s.jsonl")
    recorder = Recorder.__new__(Recorder)  # append one record to the finished file
    recorder.__init__(tmp_path / "s2.jsonl", read_session(path).header)
    recorder.write_record(
        WorkspaceManifest(
            files=[
                FileEntry(path=p, blob=blob, size=4)
                for p in (
                    "../escape.txt",
                    ".git/hooks/pre-commit",
                    "/abs.txt",
                    "ok.txt",
                    "a/./b",
                    "vendor/.git/config",
                    ".Workbench/rules.toml",
                    ".git",
                )
            ]
        )
    )
    recorder.close()
    session = read_session(tmp_path / "s2.jsonl")
    done = restore_workspace(session, 0, tmp_path / "out")
    assert files_in(tmp_path / "out") == {"ok.txt": "evil"}
    assert set(done.refused) == {
        "../escape.txt",
        ".git/hooks/pre-commit",
        "/abs.txt",
        "a/./b",
        "vendor/.git/config",
        ".Workbench/rules.toml",
        ".git",
    }
    assert not (tmp_path / "escape.txt").exists()


async def test_an_event_whose_arguments_look_like_a_record_stays_an_event(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", args={"type": "workspace_change", "cause": "x"})
    session = read_session(path)
    assert session.records == [] and len(session.events) == 13 and session.warnings == []


# -- the command -----------------------------------------------------------------------------


async def test_the_restore_command_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = await edited_session(tmp_path, checkpoints=CheckpointCaps(max_file_bytes=7))
    out = tmp_path / "out"
    assert restore_main([str(path), "--turn", "2", "--to", str(out)]) == 1  # run.sh: 8 bytes
    text = capsys.readouterr()
    assert "restored 3 files" in text.out and "missing: run.sh (larger than" in text.out
    assert "1 files of the workspace are not restored" in text.err
    assert restore_main([str(path), "--turn", "2", "--to", str(out)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert restore_main([str(path), "--turn", "9", "--to", str(tmp_path / "x")]) == 2
    with pytest.raises(SystemExit, match="2"):
        restore_main([str(path), "--turn", "x", "--to", str(tmp_path / "x")])
    old = write_session(tmp_path / "old.jsonl")
    assert restore_main([str(old), "--turn", "0", "--to", str(tmp_path / "x")]) == 2
    assert "recorded before checkpoints existed" in capsys.readouterr().err
    whole = await edited_session(tmp_path / "whole")
    assert restore_main([str(whole), "--turn", "end", "--to", str(tmp_path / "y")]) == 0


async def test_restoring_in_place_asks_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = await edited_session(tmp_path)
    workspace = tmp_path / "ws"
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert restore_main([str(path), "--turn", "1", "--in-place"]) == 2
    assert "pass --yes" in capsys.readouterr().err
    assert (workspace / "made.txt").exists()
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda _q: "n")
    assert restore_main([str(path), "--turn", "1", "--in-place"]) == 2
    assert (workspace / "made.txt").exists()
    monkeypatch.setattr("builtins.input", lambda _q: "y")
    assert restore_main([str(path), "--turn", "1", "--in-place"]) == 0
    assert files_in(workspace) == {"a.txt": "alpha\n", "old.txt": "old\n", "run.sh": "echo hi\n"}
    assert restore_main([str(path), "--turn", "end", "--in-place", "--yes"]) == 0
    assert (workspace / "made.txt").read_text() == "made\n"


def test_the_project_file_sets_the_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.cli.args import build_parser
    from workbench.cli.run_options import options_from_args
    from workbench.project.config import find_project

    (tmp_path / "workbench.toml").write_text("[checkpoints]\nmax_file_bytes = 1000\n")
    project = find_project(tmp_path)
    assert project is not None and project.checkpoints == CheckpointCaps(max_file_bytes=1000)
    monkeypatch.chdir(tmp_path)
    options = options_from_args(build_parser().parse_args([]), False, "ask")
    assert options.checkpoints.max_file_bytes == 1000
    (tmp_path / "workbench.toml").write_text("[checkpoints]\nmax_bytes = 1\n")
    with pytest.raises(ValueError, match="unknown key 'checkpoints.max_bytes'"):
        find_project(tmp_path)


def test_the_documented_caps_are_the_defaults() -> None:
    import re
    import tomllib

    doc = (Path(__file__).parents[2] / "docs" / "checkpoints.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", doc, flags=re.S)
    assert block is not None
    table = tomllib.loads(block.group(1))["checkpoints"]
    assert CheckpointCaps.model_validate(table) == CheckpointCaps()


def test_restore_never_writes_where_the_gate_protects() -> None:
    from workbench.permissions.protected import PROTECTED_DIRS
    from workbench.sessions.checkpoints import NEVER_RESTORED

    assert set(NEVER_RESTORED) == set(PROTECTED_DIRS)


def test_in_place_trusts_only_a_workspace_your_workbench_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.sessions.recorder import Recorder
    from workbench.sessions.workspace_records import FileEntry, WorkspaceManifest

    target = tmp_path / "victim"
    target.mkdir()
    header = read_session(write_session(tmp_path / "s.jsonl")).header
    header = header.model_copy(update={"workspace": str(target)})  # no signed setup
    recorder = Recorder(tmp_path / "s2.jsonl", header)
    blob = store_for(tmp_path / "s2.jsonl").put(b"ssh-rsa attacker")
    recorder.write_record(WorkspaceManifest(files=[FileEntry(path="authorized_keys", blob=blob)]))
    recorder.close()
    assert restore_main([str(tmp_path / "s2.jsonl"), "--turn", "0", "--in-place", "--yes"]) == 2
    assert "not recorded by your workbench" in capsys.readouterr().err
    assert list(target.iterdir()) == []
