"""Re-runs reproduce what ran: the recorded decisions (a person's, a rule's), edits and
denial reasons for the very calls recorded; a call that differs is judged by your rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sessions.person_runs import MIXED, answers_for_mixed, record_with_person
from workbench.agent import AgentTool, AgentToolResult, TextContent
from workbench.session_runs import rerun
from workbench.sessions import read_session


async def _recorded(tmp_path: Path) -> Any:
    runtime = await record_with_person(tmp_path / "ws", MIXED, answers_for_mixed)
    return read_session(runtime.session_path)


async def test_a_person_s_answers_are_replayed_and_every_result_is_the_same(
    tmp_path: Path,
) -> None:
    session = await _recorded(tmp_path)
    report = await rerun(session, workspace=tmp_path / "again")
    assert [c.status for c in report.calls] == ["same"] * 4, [c.diff() for c in report.calls]
    assert (tmp_path / "again" / "b.txt").read_text() == "edited by a person\n"
    refused = report.calls[1]
    assert refused.now is not None and refused.now.is_error
    assert refused.now.text == "Permission denied by the user: not today"


async def test_rules_alone_deny_what_a_person_allowed(tmp_path: Path) -> None:
    session = await _recorded(tmp_path)
    report = await rerun(session, workspace=tmp_path / "again", approve="rules")
    statuses = [c.status for c in report.calls]
    assert statuses == ["differs"] * 3 + ["same"]  # a person's three answers are not rules
    denied = next(c for c in report.calls if c.status == "differs")
    assert denied.now is not None and "--approve" not in denied.now.text
    assert "no allow rule covers this call" in denied.now.text


async def test_your_deny_rule_wins_over_a_recorded_approval(tmp_path: Path) -> None:
    session = await _recorded(tmp_path)
    report = await rerun(session, workspace=tmp_path / "again", deny=["run_command"])
    approved = report.calls[0]
    assert approved.status == "differs" and approved.now is not None
    assert approved.now.text.startswith("Permission denied by rule run_command")


async def test_a_call_that_differs_is_judged_by_your_rules_and_reported(tmp_path: Path) -> None:
    """The same recorded reply, but today's tool prepares other arguments: the person's
    approval was for another call, so it is not replayed."""
    session = await _recorded(tmp_path)
    ran: list[dict[str, Any]] = []

    from pydantic import BaseModel

    class Command(BaseModel):
        command: str

    async def execute(call_id: str, params: Any, *_: Any) -> AgentToolResult:
        ran.append(params.model_dump())
        return AgentToolResult(content=[TextContent(text="ran")])

    def louder(args: dict[str, Any]) -> dict[str, Any]:
        return {"command": args["command"].upper()}

    command = AgentTool("run_command", "run", "runs", Command, execute, prepare_arguments=louder)
    report = await rerun(session, workspace=tmp_path / "again", tools=[command])
    first = report.calls[0]
    assert first.status == "differs"
    assert any("arguments differ from the recording" in line for line in first.diff())
    assert first.now is not None and first.now.is_error  # judged by the rules: not allowed
    assert ran == []  # nothing ran on a decision made for another call


def test_the_command_replays_decisions_only_of_your_own_sessions_unless_asked(
    tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    import anyio

    from workbench.__main__ import main
    from workbench.sessions.header import SESSIONS_DIR_ENV

    session = anyio.run(_recorded, tmp_path)
    path = str(session.path)
    assert main(["rerun", path, "--workspace", str(tmp_path / "mine")]) == 0
    assert "(approve: recorded)" in capsys.readouterr().out

    monkeypatch.setenv(SESSIONS_DIR_ENV, str(tmp_path / "another-key"))  # handed to you
    assert main(["rerun", path, "--workspace", str(tmp_path / "theirs")]) == 1
    out = capsys.readouterr().out
    assert "(approve: rules)" in out and "its recorded decisions are not replayed" in out
    again = ["rerun", path, "--workspace", str(tmp_path / "read"), "--approve", "recorded"]
    assert main(again) == 0
