"""The summary line the recorder writes after each run: the library indexes a session from
it (a cold index reads no events), and only when it covers every byte of the file."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest

from tests.sessions.helpers import EDIT_THEN_WRITE, READ_A, record_run, runtime_for, write_session
from workbench.sessions import summary_line as summary_line_module
from workbench.sessions.fork import fork_point
from workbench.sessions.library import Library
from workbench.sessions.reader import read_session
from workbench.sessions.summary import summarize
from workbench.sessions.summary_line import MARKER, read_summary

TWO_RUNS = {
    "name": "two-runs",
    "prompt": "read a.txt",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says alpha."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "zeta"}}]},
        {"text": "Wrote zeta."},
    ],
}


def summary_lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if MARKER in line]


def without_summary_lines(path: Path) -> None:
    """As a workbench older than summary lines wrote it."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(line for line in lines if MARKER not in line))


def same(path: Path) -> None:
    """The summary line says what reading every event says."""
    from_line = read_summary(path)
    assert from_line is not None
    assert from_line == summarize(path)


async def test_the_summary_line_says_what_the_events_say(tmp_path: Path) -> None:
    for n, data in enumerate((READ_A, EDIT_THEN_WRITE, "demo")):
        runtime, _ = await record_run(tmp_path / f"ws{n}", data)
        assert len(summary_lines(runtime.session_path)) == 1  # after the run's agent_end
        same(runtime.session_path)
        session = read_session(runtime.session_path)
        assert not session.warnings  # the reader skips it: not an event
        assert "session_summary" not in {event.type for event in session.events}
    denied = write_session(tmp_path / "denied.jsonl", "rm it", denied=True, result="no")
    same(denied)


async def test_each_run_adds_its_text_once_and_the_last_line_covers_them_all(
    tmp_path: Path,
) -> None:
    runtime = runtime_for(tmp_path / "ws", TWO_RUNS)
    await runtime.agent.prompt("read a.txt please")
    await runtime.agent.prompt("now write zeta to b.txt")
    path = runtime.session_path
    first, second = (json.loads(line)["event"] for line in summary_lines(path))
    assert first["text"]["prompts"] == ["read a.txt please"]
    assert second["text"]["prompts"] == ["now write zeta to b.txt"]
    assert second["summary"]["prompt"] == "read a.txt please"  # the first prompt, as a table shows
    same(path)
    summary = read_summary(path)
    assert summary is not None and summary.calls == 2 and summary.turns == 4
    assert "read a.txt please" in summary.text["prompts"]
    assert "zeta" in summary.text["arguments"]
    runtime.recorder.close()  # nothing new since the last run: no third line
    assert len(summary_lines(path)) == 2


async def test_a_fork_summarizes_the_parents_history_it_holds(tmp_path: Path) -> None:
    parent, _ = await record_run(tmp_path / "ws", EDIT_THEN_WRITE)
    point = fork_point(read_session(parent.session_path), 2)
    child, _ = await record_run(tmp_path / "fork-ws", EDIT_THEN_WRITE, fork=point)
    child.recorder.close()
    same(child.session_path)


async def test_a_file_not_as_its_summary_line_says_is_read_from_its_events(
    tmp_path: Path,
) -> None:
    runtime, _ = await record_run(tmp_path / "ws", READ_A)
    path = runtime.session_path
    whole = path.read_bytes()
    last = whole.rindex(b"\n", 0, len(whole) - 1) + 1

    path.write_bytes(whole[: last - 30])  # cut off, the summary line with it
    assert read_summary(path) is None

    path.write_bytes(whole + whole[whole.index(b"\n") + 1 : last])  # grew after it
    assert read_summary(path) is None

    edited = whole.replace(b"what is in a.txt?", b"what is in b.txt?")  # the same length
    assert len(edited) == len(whole) and edited != whole
    path.write_bytes(edited)
    assert read_summary(path) is None

    def with_line(change: bytes) -> None:
        line = re.sub(rb'"crc32":[0-9]+', b'"crc32":%d' % zlib.crc32(whole[:last]), change)
        path.write_bytes(whole[:last] + line)

    with_line(whole[last:].replace(b'"version":1', b'"version":99'))  # another version
    assert read_summary(path) is None
    with_line(whole[last:])  # as it was: trusted again
    assert read_summary(path) is not None

    path.write_bytes(whole[:last] + b'{"seq":9,"ts":1.0,"event":{"type":"session_summary"}}\n')
    assert read_summary(path) is None  # a summary line without its fields
    assert summarize(path).calls == 2  # and the reader skips it as one

    newer = whole.replace(b'"version": 1,', b'"version": 99,', 1)  # a newer header format
    path.write_bytes(newer[: len(newer) - len(whole) + last] + whole[last:])
    assert read_summary(path) is None


async def test_a_cold_index_reads_no_events_and_finds_every_kind_of_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, _ = await record_run(tmp_path / "ws", "demo", session=tmp_path / "lib" / "d.jsonl")
    runtime.recorder.close()

    def no_events(path: Path) -> None:
        raise AssertionError(f"read {path} event by event")

    monkeypatch.setattr(summary_line_module, "summarize", no_events)
    with Library(tmp_path / "lib") as library:
        assert library.refresh().indexed == 1
        for words in (
            "apiBaseUrl local model server",  # the prompt
            "edit_file search_files",  # tools called
            "11434",  # an argument
            "pi-minimal-agent",  # a result (the files read)
            "malformed",  # a reply
        ):
            assert [e.path.name for e in library.entries(search=words)] == ["d.jsonl"], words
        [entry] = library.entries()
    monkeypatch.undo()
    expected = summarize(tmp_path / "lib" / "d.jsonl")
    assert entry["calls"] == expected.calls > 0 and entry["outcome"] == "finished"


async def test_a_session_an_older_workbench_wrote_is_indexed_from_its_events(
    tmp_path: Path,
) -> None:
    runtime, _ = await record_run(tmp_path / "ws", "demo", session=tmp_path / "lib" / "d.jsonl")
    runtime.recorder.close()
    with Library(tmp_path / "lib") as library:
        library.refresh()
        [new] = library.entries(search="11434")
    without_summary_lines(tmp_path / "lib" / "d.jsonl")
    assert read_summary(tmp_path / "lib" / "d.jsonl") is None
    with Library(tmp_path / "lib") as library:
        assert library.refresh().indexed == 1  # its size changed: read again, event by event
        [old] = library.entries(search="11434")
    assert old.data == new.data and old.by_tool == new.by_tool


def test_a_summary_line_is_one_json_line_an_older_reader_skips_as_an_unknown_event(
    tmp_path: Path,
) -> None:
    path = write_session(tmp_path / "s.jsonl")
    [line] = summary_lines(path)
    data = json.loads(line)
    assert set(data) == {"seq", "ts", "event"} and data["event"]["type"] == "session_summary"
    assert data["seq"] == len(path.read_bytes().splitlines()) - 1  # numbered as the lines before
