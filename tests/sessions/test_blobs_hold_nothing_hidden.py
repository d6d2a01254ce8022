"""A file the rules hide from `read_file` never enters a session's blob store (issue 36):
not at the start (the manifest), not after a built-in write, not after a command."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.sessions.helpers import record_run
from workbench.sessions.blobs import digest, store_for
from workbench.sessions.checkpoints import read_records
from workbench.sessions.reader import read_session

SECRET = "TOKEN=hunter2-the-secret\n"
WRITTEN = "TOKEN=written-by-the-model\n"
MADE = "made-by-a-command"

FLOW = {
    "name": "secrets",
    "prompt": "go",
    "workspace_files": {"a.txt": "alpha\n", ".env": SECRET, "keys/k.txt": SECRET},
    "turns": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "keys/new.txt", "content": WRITTEN}},
                {"name": "run_command", "arguments": {"command": f"echo {MADE} > keys/cmd.txt"}},
                {"name": "write_file", "arguments": {"path": "b.txt", "content": "beta\n"}},
            ]
        },
        {"text": "done"},
    ],
}
DENY = ['read_file(path=".env")', 'read_file(path="keys/**")']


@pytest.mark.parametrize("approve", ["all", "rules"])
def test_hidden_files_are_left_out_and_never_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, approve: str
) -> None:
    monkeypatch.setenv("WORKBENCH_SESSIONS_DIR", str(tmp_path / "sessions"))
    allow = ["write_file", "run_command"] if approve == "rules" else []
    runtime, _ = anyio.run(
        lambda: record_run(tmp_path / "ws", FLOW, deny=DENY, allow=allow, approve=approve)
    )
    assert (tmp_path / "ws" / "keys" / "cmd.txt").exists()  # the calls ran
    path = Path(runtime.recorder.path)
    store = store_for(path)
    for text in (SECRET, WRITTEN, MADE + "\n"):
        assert not store.has(digest(text.encode())), text
    assert store.has(digest(b"beta\n")) and store.has(digest(b"alpha\n"))
    records = [r for _, r in read_records(read_session(path))]
    stored = {f.path for r in records for f in r.files}
    left = {i.path: i.reason for r in records for i in r.left_out}
    assert stored >= {"a.txt", "b.txt"} and not stored & {".env", "keys/k.txt", "keys/new.txt"}
    for hidden in (".env", "keys/k.txt", "keys/new.txt", "keys/cmd.txt"):
        assert left[hidden].startswith("hidden from read_file"), hidden
    for blob in store.root.rglob("*"):
        if blob.is_file():
            assert b"hunter2" not in blob.read_bytes() and b"written-by" not in blob.read_bytes()
