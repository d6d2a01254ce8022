"""Re-run: recorded replies against the real tools, a changed result found, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.sessions.helpers import READ_A, record_run

from workbench.__main__ import main
from workbench.session_runs import rerun
from workbench.sessions import SessionError, read_session
from workbench.sessions.rerun import recorded_runs


async def test_the_demo_reruns_with_every_result_the_same(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws")
    report = await rerun(
        read_session(runtime.session_path), approve="all", workspace=_fresh(tmp_path)
    )
    assert [c.status for c in report.calls] == ["same"] * 9, [c.diff() for c in report.calls]
    assert not report.differs and report.warnings == []


async def test_a_changed_tool_result_is_detected_with_a_diff(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    (tmp_path / "ws" / "a.txt").write_text("beta\n")
    report = await rerun(read_session(runtime.session_path), workspace=tmp_path / "ws")
    statuses = {c.tool_name: c.status for c in report.calls}
    assert statuses == {"read_file": "differs", "list_directory": "same"}
    changed = next(c for c in report.calls if c.status == "differs")
    assert changed.tool_call_id == "call_1_1"
    assert "-alpha" in changed.diff() and "+beta" in changed.diff()
    assert report.differs


async def test_the_current_rules_apply(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    session = read_session(runtime.session_path)
    report = await rerun(session, workspace=tmp_path / "ws", deny=["read_file"])
    changed = next(c for c in report.calls if c.tool_name == "read_file")
    assert changed.status == "differs" and changed.now is not None and changed.now.is_error
    assert "is_error: False -> True" in changed.diff()


def test_the_command_exit_code_says_whether_anything_differed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    async def record() -> Path:
        runtime, _ = await record_run(tmp_path / "ws", READ_A)
        return runtime.session_path

    path = anyio.run(record)
    assert main(["rerun", str(path), "--workspace", str(tmp_path / "ws")]) == 0
    out = capsys.readouterr().out
    assert "✓ call_1_1" in out and "every result is the same" in out
    (tmp_path / "ws" / "a.txt").write_text("beta\n")
    assert main(["rerun", str(path), "--workspace", str(tmp_path / "ws"), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "✗ call_1_1" in out and "call_1_2" not in out and "+beta" in out
    assert main(["rerun", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


TWO_RUNS = {
    **READ_A,
    "turns": [
        *READ_A["turns"],
        {
            "text": "Again.",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "list_directory", "arguments": {"path": "."}},
            ],
        },
        {"text": "Noted."},
    ],
}


async def test_injected_results_and_mid_run_user_messages(tmp_path: Path) -> None:
    from workbench.stepper import Resume

    runtime, _live = await record_run(tmp_path / "ws", TWO_RUNS)
    stepper, agent = runtime.stepper, runtime.agent
    await stepper.add_breakpoint("read_file")

    def person(event: object, _signal: object = None) -> None:
        kind = getattr(event, "type", "")
        if kind == "step_paused":  # answer the read ourselves
            stepper.resume(event.pause_id, Resume.inject("made up", is_error=False))  # type: ignore[attr-defined]
        elif kind == "tool_execution_end" and not agent.queued[0]:
            agent.steer("and also this")  # delivered after this batch

    agent.subscribe(person)
    await agent.prompt("again")
    session = read_session(runtime.session_path)
    runs = recorded_runs(session.events)
    assert [len(r.replies) for r in runs] == [2, 2]
    assert [(n, m.content) for n, m in runs[1].injected] == [(1, "and also this")]
    report = await rerun(session, workspace=tmp_path / "ws")
    assert [c.status for c in report.calls] == ["same", "same", "skipped", "same"]
    assert "injected" in report.calls[2].note and not report.differs
    assert report.warnings == []


def _fresh(tmp_path: Path) -> Path:
    from tests.sessions.helpers import scenario

    from workbench.scratch import seed

    fresh = tmp_path / "fresh"
    seed(fresh, scenario("demo").workspace_files)
    return fresh


async def test_a_recording_cut_mid_batch_reruns_without_false_differences(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    lines = runtime.session_path.read_bytes().splitlines(keepends=True)
    first_end = next(i for i, line in enumerate(lines) if b'"tool_execution_end"' in line)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:first_end]))  # as if killed while the batch ran
    report = await rerun(read_session(cut), workspace=tmp_path / "ws")
    assert [c.status for c in report.calls] == ["skipped", "skipped"]
    assert all(c.note == "the recording ends before its result" for c in report.calls)
    assert not report.differs


# -- the recorded workspace is never trusted (issue 16) -------------------------------


def _live_session(path: Path, workspace: Path) -> Path:
    """The session at `path`, rewritten as a live-model session that claims `workspace`."""
    import json

    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header.update(scenario_data=None, workspace=str(workspace))
    out = path.with_name("live.jsonl")
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return out


WRITE_B = {
    "name": "write-b",
    "prompt": "write b",
    "turns": [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "b.txt", "content": "pwned"}}
            ]
        },
        {"text": "done"},
    ],
}


async def test_a_recorded_workspace_is_not_used_without_being_named(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    runtime, _ = await record_run(tmp_path / "ws", WRITE_B, approve="all")
    victim = tmp_path / "victim"
    victim.mkdir()
    session = read_session(_live_session(runtime.session_path, victim))
    with pytest.raises(ValueError, match="does not trust a path from a session file"):
        await rerun(session, approve="all")
    assert list(victim.iterdir()) == []
    report = await rerun(session, approve="all", workspace=victim)  # named: fine
    assert report.workspace == victim and (victim / "b.txt").read_text() == "pwned"


@pytest.mark.parametrize("where", ["/", "home"])
async def test_root_and_home_are_refused_even_when_named(tmp_path: Path, where: str) -> None:
    (tmp_path / "ws").mkdir()
    runtime, _ = await record_run(tmp_path / "ws", WRITE_B, approve="all")
    workspace = Path.home() if where == "home" else Path("/")
    with pytest.raises(ValueError, match="refusing to re-run tools in"):
        await rerun(read_session(runtime.session_path), approve="all", workspace=workspace)
    assert not (workspace / "b.txt").exists()


def test_the_command_asks_before_using_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    import anyio

    async def record() -> Path:
        (tmp_path / "ws").mkdir()
        runtime, _ = await record_run(tmp_path / "ws", WRITE_B, approve="all")
        return runtime.session_path

    victim, here = tmp_path / "victim", tmp_path / "here"
    victim.mkdir()
    here.mkdir()
    path = str(_live_session(anyio.run(record), victim))
    monkeypatch.chdir(here)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    assert main(["rerun", path, "--approve", "all"]) == 2
    assert "pass --workspace DIR" in capsys.readouterr().err
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    questions: list[str] = []
    monkeypatch.setattr("builtins.input", lambda q: questions.append(q) or "n")
    assert main(["rerun", path, "--approve", "all"]) == 2
    assert str(victim) in questions[0] and str(here) in questions[0]
    monkeypatch.setattr("builtins.input", lambda q: "y")
    assert main(["rerun", path, "--approve", "all"]) == 0
    assert (here / "b.txt").read_text() == "pwned" and list(victim.iterdir()) == []


async def test_rerun_takes_a_session_file_path(tmp_path: Path) -> None:
    """One public entry for scripts and test plugins: `rerun(path, ...)`."""
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    report = await rerun(str(runtime.session_path), workspace=tmp_path / "ws")
    assert [c.status for c in report.calls] == ["same", "same"] and not report.differs
    (tmp_path / "not.jsonl").write_text("{}\n")
    with pytest.raises(SessionError):
        await rerun(tmp_path / "not.jsonl", workspace=tmp_path / "ws")
