"""A re-run's files: hand edits made between two prompts are put back before the later
run, and the files each call leaves are compared with the recorded checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tests.sessions.helpers import record_run
from tests.sessions.person_runs import MIXED, answers_for_mixed, record_with_person
from workbench.agent import AgentTool, AgentToolResult, TextContent
from workbench.session_runs import rerun
from workbench.sessions import read_session


def _edit_by_hand(workspace: Path) -> None:
    (workspace / "a.txt").write_text("changed by hand\n")


async def test_hand_edits_are_put_back_before_the_run_they_preceded(tmp_path: Path) -> None:
    runtime = await record_with_person(
        tmp_path / "ws",
        MIXED,
        answers_for_mixed,
        second_prompt="and again",
        between=_edit_by_hand,
    )
    session = read_session(runtime.session_path)
    report = await rerun(session, workspace=tmp_path / "again")
    assert [c.status for c in report.calls] == ["same"] * 5, [c.diff() for c in report.calls]
    assert report.calls[-1].now is not None and "changed by hand" in report.calls[-1].now.text
    assert report.notes == ["run 2: 1 file(s) edited by hand put back first"]
    assert report.files == []


class Note(BaseModel):
    text: str


def _writer(suffix: str) -> AgentTool:
    """A tool whose answer is the same whatever it writes."""

    async def execute(_id: str, params: Any, *_: Any) -> AgentToolResult:
        Path("note.txt").write_text(params.text + suffix)  # the re-run's workspace is cwd
        return AgentToolResult(content=[TextContent(text="written")])

    return AgentTool("note", "note", "writes note.txt", Note, execute)


WRITE = {
    "name": "write",
    "prompt": "note it",
    "turns": [
        {"tool_calls": [{"name": "note", "arguments": {"text": "milk"}}]},
        {"text": "Noted."},
    ],
}


async def test_a_call_that_writes_other_contents_is_a_divergence(
    tmp_path: Path, monkeypatch: Any
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    runtime, _ = await record_run(workspace, WRITE, tools=[_writer("\n")])
    session = read_session(runtime.session_path)
    same = await rerun(session, workspace=tmp_path / "same", tools=[_writer("\n")])
    assert not same.differs and same.files == []

    other = await rerun(session, workspace=tmp_path / "other", tools=[_writer("!\n")])
    call = other.calls[0]
    assert call.status == "differs" and call.now is not None and call.now.text == "written"
    assert call.diff()[0] == "file note.txt: its content differs from the recording"
    assert other.files == ["file note.txt: its content differs from the recording"]

    class Quiet(BaseModel):
        text: str

    async def nothing(_id: str, _params: Any, *_: Any) -> AgentToolResult:
        Path("stray.txt").write_text("?")
        return AgentToolResult(content=[TextContent(text="written")])

    tool = AgentTool("note", "note", "writes elsewhere", Quiet, nothing)
    stray = await rerun(session, workspace=tmp_path / "stray", tools=[tool])
    assert "file note.txt: written in the recording, missing now" in stray.calls[0].diff()
    assert "file stray.txt: present now, never in the recording" in stray.files


async def test_diff_names_a_file_written_with_other_contents(
    tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    from workbench.__main__ import main

    paths = []
    for suffix in ("\n", "!\n"):
        workspace = tmp_path / f"ws{len(paths)}"
        workspace.mkdir()
        monkeypatch.chdir(workspace)
        runtime, _ = await record_run(workspace, WRITE, tools=[_writer(suffix)])
        paths.append(str(runtime.session_path))
    assert main(["diff", *paths, "--no-timings"]) == 1
    out = capsys.readouterr().out
    assert "first divergence: turn 1, call 1 (note): files" in out
    assert "note.txt: " in out
