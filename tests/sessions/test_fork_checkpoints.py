"""A fork keeps the parent's files, "always" answers and breakpoints; rerun starts from
the recorded files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sessions.helpers import EDIT_THEN_WRITE as FOUR
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
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "a.txt", "old_text": "alpha", "new_text": "beta"},
                }
            ]
        },
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
        return PermissionDecisionEvent(
            tool_call_id="c",
            tool_name="run_command",
            decision="allow",
            scope=scope,
            decided_by=by,
            rule=rule,
        )

    events = [
        AgentStartEvent(),
        TurnStartEvent(),
        MessageEndEvent(message=UserMessage(content="go")),
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
        TurnEndEvent(message=reply, tool_results=[]),
        AgentEndEvent(messages=[]),
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


# -- a fork and a re-run start from the recorded files ---------------------------------------


def files_in(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".workbench" not in p.parts
    }


async def four_session(tmp_path: Path) -> Path:
    runtime, _ = await record_run(tmp_path / "ws", FOUR, approve="all")
    runtime.recorder.close()
    (tmp_path / "ws" / "a.txt").write_text("changed since\n")  # the workspace moved on
    return runtime.session_path


async def test_a_fork_starts_from_the_files_at_its_turn_in_a_scratch_copy(tmp_path: Path) -> None:
    from workbench.session_runs import ForkChoice, ForkRequest, fork_options

    session = read_session(await four_session(tmp_path))
    choice = ForkChoice("scripted")
    expected = {
        0: {"a.txt": "alpha\n"},
        1: {"a.txt": "beta\n"},
        2: {"a.txt": "beta\n", "b.txt": "b"},
    }
    for turn, files in expected.items():
        options = fork_options(session, ForkRequest(turn, choice))
        assert options.workspace not in (None, tmp_path / "ws")
        assert files_in(options.workspace) == files, turn
        assert options.fork.notes[0].startswith(f"workspace: {options.workspace}: a scratch copy")
    assert (tmp_path / "ws" / "a.txt").read_text() == "changed since\n"  # untouched
    named = fork_options(session, ForkRequest(1, choice), workspace=tmp_path / "new")
    assert named.workspace == tmp_path / "new" and files_in(tmp_path / "new") == expected[1]
    assert "restored of the files at the end of turn 1" in named.fork.notes[0]
    kept = fork_options(session, ForkRequest(1, choice), workspace=tmp_path / "ws", in_place=True)
    assert kept.workspace == tmp_path / "ws"
    assert kept.fork.notes[0].endswith("as it is (in place: nothing restored)")
    assert (tmp_path / "ws" / "a.txt").read_text() == "changed since\n"
    with pytest.raises(ValueError, match="is not empty"):
        fork_options(session, ForkRequest(1, choice), workspace=tmp_path / "ws", in_place=False)


def test_a_rerun_starts_from_the_recorded_files_whatever_the_workspace_is_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    from workbench.__main__ import main
    from workbench.session_runs import rerun

    path = anyio.run(four_session, tmp_path)
    report = anyio.run(lambda: rerun(path, approve="all"))
    assert [c.status for c in report.calls] == ["same"] * 3, [c.diff() for c in report.calls]
    assert report.workspace != tmp_path / "ws"
    assert report.workspace_note.endswith("a scratch copy of the files at the start (1 files)")
    # in the workspace as it is now, the edit finds "changed since", not "alpha"
    moved = anyio.run(lambda: rerun(path, approve="all", workspace=tmp_path / "ws", in_place=True))
    assert moved.differs and moved.workspace_note.endswith("(in place: nothing restored)")
    assert main(["rerun", str(path), "--approve", "all", "--workspace", str(tmp_path / "n")]) == 0
    out = capsys.readouterr().out
    assert f"  workspace: {tmp_path / 'n'}: restored of the files at the start" in out
    assert (
        main(
            [
                "rerun",
                str(path),
                "--approve",
                "all",
                "--workspace",
                str(tmp_path / "n"),
                "--in-place",
            ]
        )
        == 1
    )  # n holds the files of the end now
    assert "(in place: nothing restored)" in capsys.readouterr().out


async def test_the_forked_runtime_keeps_the_answers_and_breakpoints(tmp_path: Path) -> None:
    from workbench.runtime import build_runtime
    from workbench.session_runs import ForkChoice, ForkRequest, fork_options

    path = answered_session(tmp_path / "s.jsonl", mine=True)
    (tmp_path / "w").mkdir()
    options = fork_options(
        read_session(path), ForkRequest(1, ForkChoice("scripted")), workspace=tmp_path / "w"
    )
    options.scenario = "demo"
    runtime = build_runtime(options)
    rule, action, _ = runtime.gate.judge("run_command", {"command": "pytest -q"})
    assert action == "allow" and rule is not None and rule.source == "session"
    rule, action, _ = runtime.gate.judge("run_command", {"command": "rm -rf /"})
    assert action == "ask"  # only what the person allowed
    assert [b.text for b in runtime.stepper.breakpoints] == ["write_file", "@error"]
    stranger = answered_session(tmp_path / "x.jsonl", mine=False)
    options = fork_options(
        read_session(stranger), ForkRequest(1, ForkChoice("scripted")), workspace=tmp_path / "w"
    )
    options.scenario = "demo"
    _, action, _ = build_runtime(options).gate.judge("run_command", {"command": "pytest -q"})
    assert action == "ask"
