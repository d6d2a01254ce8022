"""The session library: an SQLite index kept in step with the session files."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sessions.helpers import write_session
from workbench.sessions.library import INDEX_NAME, Filters, Library

ROOT = Path(__file__).resolve().parents[2]


def names(entries: list) -> list[str]:
    return sorted(entry.path.name for entry in entries)


def test_refresh_reads_only_what_changed_and_drops_what_is_gone(tmp_path: Path) -> None:
    for n in range(3):
        write_session(tmp_path / f"s{n}.jsonl", f"prompt {n}", created=1e12 + n)
    with Library(tmp_path) as library:
        first = library.refresh()
        assert (first.indexed, first.unchanged, first.removed) == (3, 0, 0)
        again = library.refresh()
        assert (again.indexed, again.unchanged, again.removed) == (0, 3, 0)
        assert [e.path.name for e in library.entries()] == ["s2.jsonl", "s1.jsonl", "s0.jsonl"]

        # s1 grows (a session still being recorded): its entry is read again
        grown = write_session(tmp_path / "other.jsonl", "x", finished=False)
        lines = (tmp_path / "s1.jsonl").read_bytes().splitlines(keepends=True)
        (tmp_path / "s1.jsonl").write_bytes(b"".join(lines[:5]))
        grown.unlink()
        assert library.refresh().indexed == 1
        [s1] = [e for e in library.entries() if e.path.name == "s1.jsonl"]
        assert s1["outcome"] == "incomplete" and s1["calls"] == 0

        (tmp_path / "s0.jsonl").unlink()
        gone = library.refresh()
        assert (gone.removed, gone.indexed) == (1, 0)
        assert names(library.entries()) == ["s1.jsonl", "s2.jsonl"]
        assert library.entries(search="prompt") and not library.entries(search="0")
        for suffix in ("", "-wal"):  # the index holds the sessions' text: owner only
            assert Path(f"{tmp_path / INDEX_NAME}{suffix}").stat().st_mode & 0o077 == 0


def test_a_summary_holds_header_outcome_counts_and_tokens(tmp_path: Path) -> None:
    write_session(
        tmp_path / "a.jsonl",
        "check the config",
        tool="edit_file",
        denied=True,
        result="denied by rule",
        model="gpt-x",
    )
    with Library(tmp_path) as library:
        library.refresh()
        [entry] = library.entries()
    assert entry["model"] == "gpt-x" and entry["workspace"] == "/tmp/ws"
    assert entry["outcome"] == "finished" and entry["prompt"] == "check the config"
    assert (entry["turns"], entry["calls"], entry["errors"], entry["denials"]) == (2, 1, 1, 1)
    assert (entry["input_tokens"], entry["output_tokens"], entry["total_tokens"]) == (30, 8, 38)
    assert entry["duration_ms"] == 1200.0  # 13 events, 100 ms apart
    assert entry.by_tool == {"edit_file": {"calls": 1, "errors": 1}}


def test_a_lost_or_broken_index_is_rebuilt_without_asking(tmp_path: Path) -> None:
    for n in range(2):
        write_session(tmp_path / f"s{n}.jsonl", f"prompt {n}")
    with Library(tmp_path) as library:
        library.refresh()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    with Library(tmp_path) as library:
        assert library.refresh().indexed == 2
        assert names(library.entries()) == ["s0.jsonl", "s1.jsonl"]

    (tmp_path / INDEX_NAME).write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp_path / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    with Library(tmp_path) as library:
        report = library.refresh()
        assert report.rebuilt and report.indexed == 2

    db = sqlite3.connect(tmp_path / INDEX_NAME)
    db.execute("PRAGMA user_version = 99")  # an index another version wrote
    db.close()
    with Library(tmp_path) as library:
        report = library.refresh()
        assert report.rebuilt and report.indexed == 2
        assert len(library.entries()) == 2


def test_an_unreadable_file_is_listed_as_such_and_not_read_again(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text("not json\n")
    with Library(tmp_path) as library:
        assert library.refresh().indexed == 1
        [entry] = library.entries()
        assert entry["outcome"] == "unreadable" and "not a session file" in entry["problem"]
        assert library.refresh().unchanged == 1


_REFRESH = """
import sys
from pathlib import Path
from workbench.sessions.library import Library
with Library(Path(sys.argv[1])) as library:
    sys.stdin.readline()  # both processes start refreshing together
    print(library.refresh().indexed)
"""


def test_two_processes_refreshing_at_once_both_succeed(tmp_path: Path) -> None:
    for n in range(40):
        write_session(tmp_path / f"s{n:02}.jsonl", f"prompt number{n}", created=1e12 + n)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _REFRESH, str(tmp_path)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:  # each has opened the database before either starts
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [proc.communicate(timeout=120) for proc in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert 0 <= int(out) <= 40
    with Library(tmp_path) as library:
        assert library.refresh().unchanged == 40
        entries = library.entries()
        assert len(entries) == 40 and len({e.path for e in entries}) == 40
        assert len(library.entries(search="number7")) == 1
        assert library.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        fts = library.db.execute("SELECT count(*) FROM text").fetchone()[0]
        assert fts == 40


_OPEN_AT_ONCE = """
import sys, tempfile, threading
from pathlib import Path
from workbench.sessions.library import Library
from tests.sessions.helpers import write_session

failed = []
for _ in range(150):
    directory = Path(tempfile.mkdtemp(dir=sys.argv[1]))
    write_session(directory / "one.jsonl", "fix the config")
    both = threading.Barrier(2)

    def run(job):
        both.wait()
        try:
            with Library(directory) as library:
                job(library)
        except Exception as exc:
            failed.append(repr(exc))

    jobs = [lambda library: library.refresh(), lambda library: library.entries()]
    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    [t.start() for t in threads]
    [t.join() for t in threads]
    with Library(directory) as library:
        if len(library.entries()) != 1:
            failed.append("the session is not listed")
print(failed)
"""


def test_a_new_index_opened_by_two_at_once_serves_both(tmp_path: Path) -> None:
    """The session library's screen lists while its worker indexes: on a new index both
    connections set it up at the same moment. Neither may fail, and neither may take the
    other's half-made file for a broken one and delete it (which crashed the process
    with SIGBUS). In a child process, so a crash fails this test only."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _OPEN_AT_ONCE, str(tmp_path)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_search_needs_every_word_and_reads_none_as_syntax(tmp_path: Path) -> None:
    write_session(
        tmp_path / "a.jsonl",
        "fix the parser",
        args={"path": "src/parser.py"},
        result='SyntaxError: "unexpected" AND near(',
        created=1e12,
    )
    write_session(
        tmp_path / "b.jsonl",
        "fix the lexer \ud800",
        tool="edit_file",
        is_error=True,
        created=2e12,
        model="gpt-4o",
    )
    with Library(tmp_path) as library:
        library.refresh()
        assert names(library.entries(search="fix")) == ["a.jsonl", "b.jsonl"]
        assert names(library.entries(search="fix parser")) == ["a.jsonl"]
        assert names(library.entries(search="src/parser.py")) == ["a.jsonl"]  # an argument
        assert names(library.entries(search='"unexpected" AND near(')) == ["a.jsonl"]
        assert names(library.entries(search="edit_file")) == ["b.jsonl"]  # a tool name
        assert names(library.entries(search="pars*")) == ["a.jsonl"]  # a prefix
        assert names(library.entries(search="pars")) == []
        assert library.entries(search="nowhere") == []
        [hit] = library.entries(search="parser")
        assert "[parser]" in hit.snippet
        for empty in ("  ", "* **"):
            with pytest.raises(ValueError):
                library.entries(search=empty)

        assert names(library.entries(Filters(model="GPT"))) == ["b.jsonl"]
        assert names(library.entries(Filters(tool="edit_file"))) == ["b.jsonl"]
        assert names(library.entries(Filters(tool="read_file", errors=True))) == []
        assert names(library.entries(Filters(errors=True))) == ["b.jsonl"]
        assert names(library.entries(Filters(since=1.5e12))) == ["b.jsonl"]
        assert names(library.entries(Filters(denied=True))) == []
        assert names(library.entries(Filters(limit=1))) == ["b.jsonl"]
        assert names(library.entries(Filters(model="gpt"), search="fix")) == ["b.jsonl"]
