"""Recording and reading: compact lines that fold to the live state, the header, bad files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sessions.helpers import READ_A, record_run, runtime_for
from tests.widgets.helpers import wait_for
from workbench.agent import AgentStartEvent, TurnStartEvent
from workbench.providers.settings import OpenAISettings
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions import (
    FORMAT_VERSION,
    Recorder,
    SessionError,
    build_header,
    read_session,
)
from workbench.sessions.codec import encode
from workbench.sessions.summary_line import MARKER as SUMMARY_MARKER
from workbench.view.fold import fold


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


async def test_the_demo_recorded_compactly_folds_to_the_live_state(tmp_path: Path) -> None:
    runtime, live = await record_run(tmp_path / "ws")
    session = read_session(runtime.session_path)
    assert session.warnings == [] and not session.torn
    assert len(session.events) == live.event_count == runtime.recorder.events_written
    assert fold(session.events) == live
    updates = [
        line
        for line in lines_of(runtime.session_path)[1:]
        if line["event"]["type"] == "message_update"
    ]
    assert updates and all("message" not in u["event"] for u in updates)
    assert all("partial" not in u["event"]["assistant_message_event"] for u in updates)
    starts = [
        u for u in updates if u["event"]["assistant_message_event"]["type"] == "toolcall_start"
    ]
    assert {s["block"]["id"] for s in starts} == set(live.calls)
    # Read in order, the rebuilt streamed message is a whole, valid event again, equal
    # to the final reply (one object shared by the reply's updates, as live).
    events = session.events[:]
    update = next(e for e in events if e.type == "message_update")
    end = next(e for e in events if e.type == "message_end" and e.message.role == "assistant")
    assert update.message.content == end.message.content
    assert runtime.recorder.bytes_written < 150_000  # about 350 bytes an event


async def test_the_replayed_state_at_every_event_is_the_live_state_at_that_event(
    tmp_path: Path,
) -> None:
    import copy

    from workbench.view.fold import ViewState

    runtime = runtime_for(tmp_path / "ws")
    live, seen = ViewState(), []

    def watch(event: object, _signal: object = None) -> None:
        live.apply(event)
        seen.append(copy.deepcopy(live))

    runtime.agent.subscribe(watch)
    await runtime.agent.prompt(runtime.prompt)
    replayed = ViewState()
    events = read_session(runtime.session_path).events
    assert len(events) == len(seen)
    for n, (event, expected) in enumerate(zip(events, seen, strict=True), 1):
        replayed.apply(event)
        assert replayed == expected, f"differs after event {n} ({event.type})"


async def test_lines_carry_sequence_numbers_and_times_and_the_header_what_ran(
    tmp_path: Path,
) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    header, *lines = lines_of(runtime.session_path)
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert all(isinstance(line["ts"], float) for line in lines)
    assert header["format"] == "agent-workbench-session" and header["version"] == FORMAT_VERSION
    assert header["model"] == {"id": "scripted", "provider": "scripted", "base_url": None}
    assert header["workspace"] == str(tmp_path / "ws") and header["scenario"] == "read-a"
    tool = next(t for t in header["tools"] if t["name"] == "read_file")
    assert tool["json_schema"]["properties"]["path"] and tool["source"] == "builtin"
    assert header["scenario_data"]["turns"] and header["parent"] is None


def test_the_header_never_holds_a_key(tmp_path: Path) -> None:
    settings = OpenAISettings(
        model="gpt-x", base_url="http://127.0.0.1:9/v1", api_key="sk-SECRET-do-not-write"
    )
    runtime = build_runtime(
        RunOptions(provider_settings=settings, workspace=tmp_path, session=tmp_path / "s.jsonl")
    )
    header = runtime.recorder.header.model_dump_json()
    assert "SECRET" not in header and '"base_url":"http://127.0.0.1:9/v1"' in header
    assert runtime.recorder.header.scenario is None


async def test_a_live_model_session_holds_no_key_or_auth_header(tmp_path: Path) -> None:
    from tests.support.chat_server import ChatServer, finish, stream_reply, text_chunks

    with ChatServer() as server:
        server.script(stream_reply([*text_chunks("Hi there.", 2), finish("stop")]))
        settings = OpenAISettings(
            model="test-model",
            base_url=server.url,
            api_key="sk-SECRET-do-not-write",
            max_retries=0,
            extra_headers={"X-Trace": "t1"},
        )
        runtime = build_runtime(
            RunOptions(provider_settings=settings, workspace=tmp_path, approve="all")
        )
        await runtime.agent.prompt("hello")
    text = runtime.session_path.read_text()
    assert "SECRET" not in text and "Bearer" not in text
    session = read_session(runtime.session_path)
    assert any(e.type == "provider_request" for e in session.events)
    assert session.events[-1].messages[-1].content[0].text == "Hi there."


def test_recording_is_lazy_by_default_and_can_be_turned_off(
    tmp_path: Path, sessions_dir: Path
) -> None:
    runtime = runtime_for(tmp_path / "ws")
    assert runtime.session_path is not None and runtime.session_path.parent == sessions_dir
    assert runtime.session_path.name.endswith("-demo.jsonl") and not runtime.session_path.exists()
    assert runtime_for(tmp_path / "ws2", record=False).session_path is None


def test_an_existing_session_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "taken.jsonl"
    path.write_text("precious\n")
    with pytest.raises(FileExistsError, match="already exists"):
        runtime_for(tmp_path / "ws", session=path)
    assert path.read_text() == "precious\n"


def test_a_failing_write_never_raises_and_stops_the_recording(tmp_path: Path) -> None:
    from workbench.agent import Model

    recorder = Recorder.open(
        tmp_path / "s.jsonl", build_header(model=Model(id="m"), tools=[], workspace=tmp_path)
    )
    recorder(AgentStartEvent())
    recorder(object())  # not an event: serialising it fails
    recorder(TurnStartEvent())
    assert recorder.error is not None and not recorder.recording
    assert [e.type for e in read_session(tmp_path / "s.jsonl").events] == ["agent_start"]


# -- reading bad files -------------------------------------------------------------------


async def test_a_torn_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    data = runtime.session_path.read_bytes()
    whole = read_session(runtime.session_path)
    summary = data.rindex(b"\n", 0, len(data) - 1) + 1  # the run's summary line
    assert SUMMARY_MARKER in data[summary:]
    # killed while writing the run's last event (so before its summary line)
    runtime.session_path.write_bytes(data[: summary - 25])
    session = read_session(runtime.session_path)
    assert session.torn and len(session.events) == len(whole.events) - 1
    assert "last line is incomplete" in session.warnings[0]
    assert fold(session.events).run_state != "idle"


def write_session(path: Path, header: dict, *lines: bytes) -> Path:
    path.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines))
    return path


def header_dict(**changes: object) -> dict:
    from workbench.agent import Model

    data = build_header(model=Model(id="m"), tools=[], workspace="/w").model_dump(mode="json")
    return {**data, **changes}


def test_a_newer_format_version_gets_a_clear_error(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", header_dict(version=FORMAT_VERSION + 1, workbench_version="9.0")
    )
    with pytest.raises(
        SessionError, match=r"format version 2 \(written by workbench 9\.0\).*upgrade"
    ):
        read_session(path)
    for bad in ("1", 0, None):
        write_session(path, header_dict(version=bad))
        with pytest.raises(SessionError, match="unknown session format version"):
            read_session(path)


def test_files_that_are_not_sessions_get_one_line_errors(tmp_path: Path) -> None:
    cases = {
        b"": "is empty",
        b"hello\n": "first line is not JSON",
        b'{"format": "other"}\n': "not an agent-workbench session",
        b'{"format": "agent-workbench-ses': "no complete header",
    }
    for data, message in cases.items():
        (tmp_path / "x.jsonl").write_bytes(data)
        with pytest.raises(SessionError, match=message):
            read_session(tmp_path / "x.jsonl")
    with pytest.raises(SessionError, match="cannot read"):
        read_session(tmp_path / "missing.jsonl")


def test_a_bad_line_in_the_middle_is_an_error_and_an_unknown_event_type_a_warning(
    tmp_path: Path,
) -> None:
    good = encode(1, 0.0, AgentStartEvent())
    unknown = b'{"seq":2,"ts":0,"event":{"type":"from_the_future","timestamp":1}}\n'
    path = write_session(
        tmp_path / "s.jsonl", header_dict(), good, unknown, encode(3, 0.0, TurnStartEvent())
    )
    session = read_session(path)
    assert [e.type for e in session.events] == ["agent_start", "turn_start"]
    assert "unknown event type 'from_the_future'" in session.warnings[0]
    write_session(
        path,
        header_dict(),
        good,
        b'{"seq":2,"ts":0,"event":{"type":"turn_start","timestamp":"x"}}\n',
        good,
    )
    with pytest.raises(SessionError, match=r"s\.jsonl:3: not a valid event line"):
        read_session(path)


def test_the_sessions_package_loads_no_ui() -> None:
    probe = (
        "import workbench.sessions, workbench.cli.commands, workbench.session_runs, "
        "workbench.sessions.export, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_a_session_reads_the_same_in_small_chunks_and_keeps_no_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines cut across chunk boundaries (and longer than a chunk) read back the same;
    what the log keeps is where each event is, and `log[i]` decodes the same object
    while it stays in the cache."""
    from workbench.sessions import log as log_module
    from workbench.sessions import reader as reader_module
    from workbench.sessions.log import EventLog, of_kinds
    from workbench.sessions.scrub import ScrubFold

    runtime, live = await record_run(tmp_path / "ws")
    whole = read_session(runtime.session_path)
    expected = [e.model_dump() for e in whole.events]
    monkeypatch.setattr(reader_module, "CHUNK", 97)
    monkeypatch.setattr(log_module, "CHUNK", 89)
    scrub = ScrubFold()
    small = read_session(runtime.session_path, scrub.feed)
    assert isinstance(small.events, EventLog)
    assert [e.model_dump() for e in small.events] == expected
    assert [e.type for e in small.events[25:60]] == [e["type"] for e in expected[25:60]]
    assert small.events[7] is small.events[7] and small.events[-1].type == "agent_end"
    assert [e.message for e in of_kinds(small.events, ["message_end"])] == [
        e.message for e in whole.events if e.type == "message_end"
    ]
    assert len(small.stamps) == len(expected) and small.stamps[3] <= small.stamps[-1]
    scrub.attach(small.events)
    assert scrub.position == len(expected) and scrub.state == live


async def test_a_flood_of_updates_is_recorded_as_deltas_at_a_bounded_rate(tmp_path: Path) -> None:
    """A tool sending 2,000 updates, each its whole growing log (as an MCP server's
    progress does): the session holds each recorded update as what it added, past the
    first 200 at most ten a second, the output capped to its tail; the replay ends on
    the live output and counts every update."""
    from workbench.agent import AgentToolResult, tool
    from workbench.sessions.compact import FREE_UPDATES, OUTPUT_CAP

    @tool
    async def chatty(on_update) -> str:  # type: ignore[no-untyped-def]
        """Report progress 2,000 times."""
        lines: list[str] = []
        for i in range(2_000):
            lines.append(f"progress {i}: " + "x" * 40)
            on_update(AgentToolResult.text("\n".join(lines), details={"i": i}))
        return "done"

    data = {
        "name": "flood",
        "prompt": "go",
        "turns": [{"tool_calls": [{"name": "chatty", "arguments": {}}]}, {"text": "ok"}],
    }
    began = time.monotonic()
    runtime, live = await record_run(tmp_path / "ws", data, tools=[chatty], allow=["chatty"])
    took = time.monotonic() - began
    record = next(iter(live.calls.values()))
    assert record.update_count == 2_000 and len(record.output) > OUTPUT_CAP
    size = runtime.session_path.stat().st_size
    assert size < 400_000  # far below 2,000 updates written whole
    session = read_session(runtime.session_path)
    updates = [e for e in session.events if e.type == "tool_execution_update"]
    # the first 200, then at most ten a second (however long the loop took), and the last
    assert FREE_UPDATES + 1 <= len(updates) <= FREE_UPDATES + 2 + int(took * 10)
    # each recorded update says how many before it were not: together, all the others
    assert sum(u.unrecorded for u in updates) == 2_000 - len(updates)
    assert [u.partial_result.details["i"] for u in updates] == sorted(
        u.partial_result.details["i"] for u in updates
    )
    assert updates[-1].args == {} and updates[-1].partial_result.details == {"i": 1_999}
    replayed = fold(session.events)
    shown = next(iter(replayed.calls.values()))
    assert shown.update_count == 2_000 and shown.unrecorded == 2_000 - len(updates)
    assert record.unrecorded == 0  # live, nothing is left out
    left_out = len(record.output) - OUTPUT_CAP
    assert shown.output == (
        f"[{left_out:,} characters before this were not recorded]\n" + record.output[left_out:]
    )
    from workbench.widgets.replay_app import ReplayApp

    app = ReplayApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.settled)
        app.select_call(shown.id)
        await pilot.pause()
        text = " ".join(app.inspector.section_text("Live output").split())
    assert f"2000 updates, {shown.unrecorded} not recorded, final" in text
    assert f"[{left_out:,} characters before this were not recorded]" in text
    lines = lines_of(runtime.session_path)
    later = [line for line in lines[1:] if line["event"]["type"] == "tool_execution_update"][1:]
    assert all("content" not in line["event"]["partial_result"] for line in later)
    assert all(line["start_args"] and "args" not in line["event"] for line in later)
