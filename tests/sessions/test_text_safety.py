"""Any text a model or a file system produces is recorded, printed and exported whole and safely.

Before: a lone surrogate in a model's JSON arguments or a file name that is not
UTF-8 stopped the recording for the rest of the run (exit code still 0) and printed
tracebacks headless; a disk-full session was silent; JSON nested 10,000 deep failed
the whole run and 100,000 deep crashed export, replay and rerun with RecursionError;
a tool name broke out of its Markdown heading.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from tests.sessions.helpers import READ_A, record_run

from tests.support.hostile import EVIL, NON_UTF8_NAME, hostile_scenario, make_non_utf8_file
from workbench.__main__ import main
from workbench.agent import ToolCall, ToolResultMessage
from workbench.sanitize import UNSAFE
from workbench.sessions import read_session
from workbench.sessions.export import to_json, to_markdown
from workbench.sessions.history import messages_of
from workbench.view.fold import fold

ROOT = Path(__file__).resolve().parents[2]


def _workbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


async def test_surrogates_and_non_utf8_names_are_recorded_and_read_back_exactly(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_non_utf8_file(workspace)
    runtime, live = await record_run(workspace, hostile_scenario(), session=tmp_path / "s.jsonl")
    assert runtime.recorder.problems == [] and runtime.recorder.recording
    session = read_session(tmp_path / "s.jsonl")
    assert not session.warnings
    assert fold(session.events) == live  # every event, as the bus carried it
    calls = [
        b
        for m in messages_of(session.events)
        if m.role == "assistant"
        for b in m.content
        if isinstance(b, ToolCall)
    ]
    assert calls[3].arguments == {"path": "a\ud800.txt"}  # the lone surrogate, exactly
    [listing] = [
        m
        for m in messages_of(session.events)
        if isinstance(m, ToolResultMessage) and m.tool_name == "list_directory"
    ]
    assert os.fsdecode(NON_UTF8_NAME) in listing.text  # the name's bytes survive
    assert session.header.model.id == "model" + EVIL


async def test_exports_of_hostile_text_are_safe_and_exact(tmp_path: Path) -> None:
    scenario = hostile_scenario()
    scenario["turns"][0]["tool_calls"].append(
        {"name": "x`\n# Owned heading\n```", "arguments": {"code": "``` `` ````"}}
    )
    await record_run(tmp_path / "ws", scenario, session=tmp_path / "s.jsonl")
    session = read_session(tmp_path / "s.jsonl")
    md = to_markdown(session)
    assert UNSAFE.search(md) is None  # nothing a terminal acts on, nothing hidden
    assert "⟨U+202E⟩" in md and "⟨U+200B⟩" in md and "⟨U+D800⟩" in md and "␛]52" in md
    tokens = MarkdownIt().parse(md)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert not any("Owned" in h and "Tool call" not in h for h in headings)  # no breakout...
    assert "Tool call ```` x`⏎# Owned heading⏎``` ```` (`call_1_6`)" in headings  # ...as code
    assert "\n`````json\n" in md  # a fence longer than the 4 backticks inside
    data = json.loads(text := to_json(session))
    assert UNSAFE.search(text) is None  # written as JSON escapes...
    assert data["messages"][0]["content"] == "please " + EVIL  # ...read back exact
    assert data["model"]["id"] == "model" + EVIL


def test_headless_prints_hostile_text_literally_without_tracebacks(tmp_path: Path) -> None:
    scenario = tmp_path / "hostile.json"
    scenario.write_text(json.dumps(hostile_scenario()))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_non_utf8_file(workspace)
    run = _workbench(
        "--scenario",
        str(scenario),
        "--headless",
        "--approve",
        "all",
        "--workspace",
        str(workspace),
        "--session",
        str(tmp_path / "s.jsonl"),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "listener failed" not in run.stderr
    assert UNSAFE.search(run.stdout) is None
    assert "⟨U+202E⟩" in run.stdout and "␛]52" in run.stdout and "⟨U+DCFF⟩" in run.stdout
    assert read_session(tmp_path / "s.jsonl").events[-1].type == "agent_end"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_recording_failure_is_said_and_the_exit_code_is_not_0(tmp_path: Path) -> None:
    scenario = tmp_path / "read-a.json"
    scenario.write_text(json.dumps(READ_A))
    run = _workbench(
        "--headless", "--scenario", str(scenario), "--session", "/dev/full", cwd=tmp_path
    )
    assert run.returncode == 3
    assert "workbench: session recording to /dev/full stopped: OSError: No space left" in run.stderr
    assert "Traceback" not in run.stderr and "It says alpha." in run.stdout  # the run went on


async def test_an_event_no_line_can_hold_keeps_its_place_and_recording_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.sessions import recorder as recorder_module

    real = recorder_module.encode

    def failing(seq: int, ts: float, event: Any, *rest: Any) -> bytes:
        if event.type == "tool_execution_end" and event.tool_name == "list_directory":
            raise ValueError("Maximum serialization depth exceeded")
        return real(seq, ts, event, *rest)

    monkeypatch.setattr(recorder_module, "encode", failing)
    runtime, _ = await record_run(tmp_path / "ws", READ_A, session=tmp_path / "s.jsonl")
    [problem] = runtime.recorder.problems
    assert "(tool_execution_end) could not be recorded: ValueError" in problem
    session = read_session(tmp_path / "s.jsonl")
    [warning] = session.warnings
    assert "a tool_execution_end event could not be recorded" in warning
    assert session.events[-1].type == "agent_end"  # everything after it is there


async def test_deep_arguments_fail_that_call_only(tmp_path: Path) -> None:
    scenario = {
        "name": "deep",
        "prompt": "go",
        "workspace_files": {"a.txt": "alpha\n"},
        "turns": [
            {
                "tool_calls": [
                    {"name": "read_file", "raw": '{"path": "a.txt", "x": ' + _deep(10_000) + "}"},
                    {"name": "read_file", "arguments": {"path": "a.txt"}},
                ]
            },
            {"text": "done"},
        ],
    }
    runtime, live = await record_run(tmp_path / "ws", scenario, session=tmp_path / "s.jsonl")
    deep, flat = live.calls["call_1_1"], live.calls["call_1_2"]
    assert deep.failed_stage == "parse" and "nested 10001 levels deep" in (deep.arg_error or "")
    assert deep.is_error and not flat.is_error and live.run_state == "finished"
    assert runtime.recorder.problems == []
    assert "nested 10001 levels deep" in to_markdown(read_session(tmp_path / "s.jsonl"))


def test_a_session_line_nested_100k_deep_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    anyio.run(lambda: record_run(tmp_path / "ws", READ_A, session=tmp_path / "s.jsonl"))
    path = tmp_path / "s.jsonl"
    lines = path.read_bytes().split(b"\n")
    deep = '{"seq":3,"ts":1.0,"event":{"type":"agent_start","x":' + _deep(100_000) + "}}"
    lines.insert(3, deep.encode())
    path.write_bytes(b"\n".join(lines))
    session = read_session(path)
    assert session.warnings == [
        "s.jsonl:4: JSON nested 100002 levels deep (the limit is 120); skipped it"
    ]
    assert session.events[-1].type == "agent_end"
    assert main(["export", str(path), "--format", "md"]) == 0
    assert main(["export", str(path), "--format", "json"]) == 0
    assert main(["rerun", str(path), "--workspace", str(tmp_path / "ws"), "--approve", "all"]) == 0
    err = capsys.readouterr().err
    assert err.count("levels deep") == 3 and "Traceback" not in err
    header = path.read_bytes().split(b"\n")
    header[0] = b'{"format": "agent-workbench-session", "x": ' + _deep(100_000).encode() + b"}"
    path.write_bytes(b"\n".join(header))
    assert main(["export", str(path), "--format", "md"]) == 2
    assert "the header line is JSON nested" in capsys.readouterr().err
