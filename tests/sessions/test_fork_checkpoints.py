"""A fork keeps the parent's files, "always" answers and breakpoints; rerun starts from
the recorded files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sessions.helpers import record_run
from workbench.agent import (
    AgentEndEvent,
    AgentStartEvent,
    AssistantMessage,
    MessageEndEvent,
    TextContent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessage,
)
from workbench.bus_events import PermissionDecisionEvent, StepModeEvent
from workbench.sessions import read_session
from workbench.sessions.checkpoints import read_records, restore_workspace
from workbench.sessions.fork import fork_point
from workbench.sessions.header import AgentSetup, ModelInfo, SessionHeader, signed
from workbench.sessions.recorder import Recorder

EDITS = {
    "name": "edits",
    "prompt": "change things",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "a.txt", "old_text": "alpha", "new_text": "beta"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}]},
        {"text": "Done."},
    ],
}


def answered_session(path: Path, *, mine: bool) -> Path:
    """Two turns: in the first a person answered "always" twice; breakpoints changed."""
    setup = signed(AgentSetup()) if mine else AgentSetup(signature="0" * 64)
    header = SessionHeader(model=ModelInfo(id="m", provider="scripted"), setup=setup)
    reply = AssistantMessage(content=[TextContent(text="ok")])

    def decision(rule: str, scope: Any, by: Any = "user") -> PermissionDecisionEvent:
        return PermissionDecisionEvent(tool_call_id="c", tool_name="run_command",
                                       decision="allow", scope=scope, decided_by=by, rule=rule)

    events = [
        AgentStartEvent(), TurnStartEvent(), MessageEndEvent(message=UserMessage(content="go")),
        StepModeEvent(enabled=False, breakpoints=["write_file"]),
        decision('run_command(command="pytest *")', "always_pattern"),
        decision("read_file", "always_tool"),
        decision("list_directory", "once"),
        decision("search_files", "once", by="rule"),
        StepModeEvent(enabled=True, breakpoints=["write_file", "@error"]),
        TurnEndEvent(message=reply, tool_results=[]),
        TurnStartEvent(),
        decision("edit_file", "always_tool"),  # after the cut of turn 1
        StepModeEvent(enabled=False, breakpoints=[]),
        TurnEndEvent(message=reply, tool_results=[]), AgentEndEvent(messages=[]),
    ]
    recorder = Recorder(path, header)
    for event in events:
        recorder.write(event)
    recorder.close()
    return path


def test_a_fork_keeps_the_always_answers_and_breakpoints_up_to_its_turn(tmp_path: Path) -> None:
    point = fork_point(read_session(answered_session(tmp_path / "s.jsonl", mine=True)), 1)
    assert point.always == ['run_command(command="pytest *")', "read_file"]
    assert point.breakpoints == ["write_file", "@error"]
    assert point.notes == [
        'kept the parent\'s "always" answers: run_command(command="pytest *"), read_file',
        "kept the parent's breakpoints: write_file, @error",
    ]
    later = fork_point(read_session(tmp_path / "s.jsonl"), 2)
    assert later.always[-1] == "edit_file" and later.breakpoints == []


def test_a_session_someone_else_recorded_hands_the_fork_no_rules(tmp_path: Path) -> None:
    point = fork_point(read_session(answered_session(tmp_path / "s.jsonl", mine=False)), 1)
    assert point.always == []
    assert point.notes[0].startswith('not kept: the parent\'s "always" answers')
    assert "not recorded by your workbench" in point.notes[0]
    assert point.breakpoints == ["write_file", "@error"]  # a breakpoint only pauses


async def test_the_initial_breakpoints_are_recorded(tmp_path: Path) -> None:
    runtime, _ = await record_run(tmp_path / "ws", EDITS, breakpoints=["@error"])
    modes = [e for e in read_session(runtime.session_path).events if e.type == "step_mode"]
    assert [(m.enabled, m.breakpoints) for m in modes] == [(False, ["@error"])]


async def test_a_fork_file_carries_the_parents_records_so_it_restores_every_turn(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    parent, _ = await record_run(tmp_path / "ws", EDITS)
    parent.recorder.close()
    session = read_session(parent.session_path)
    point = fork_point(session, 1)
    assert [r.type for _, r in point.records] == ["workspace_manifest", "workspace_change"]
    fork_ws = tmp_path / "fork-ws"
    restore_workspace(session, 2, fork_ws)  # the files at the cut (the start of turn 2)
    child, _ = await record_run(fork_ws, EDITS, fork=point)
    child.recorder.close()
    forked = read_session(child.session_path)
    kinds = [r.type for _, r in read_records(forked)]
    assert kinds[:2] == ["workspace_manifest", "workspace_change"]  # the parent's
    assert kinds[2] == "workspace_manifest"  # the fork's own, when it started
    restore_workspace(forked, 0, tmp_path / "at-0")
    assert (tmp_path / "at-0" / "a.txt").read_text() == "alpha\n"  # the parent's start
