"""A fork with the recorded scenario plays the parent's later calls again: those a
person allowed as sent are not asked again; denied or edited ones are (the person
may have forked to answer otherwise), and a stranger's session keeps none."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from tests.sessions.person_runs import MIXED, answers_for_mixed, record_with_person
from workbench.permissions.answers import PermissionAnswer
from workbench.runtime import build_runtime
from workbench.session_runs import ForkChoice, ForkRequest, fork_options
from workbench.sessions import read_session
from workbench.sessions.header import SESSIONS_DIR_ENV

SCRIPTED = ForkChoice("the recorded scenario")


async def _fork_and_count_questions(session: Any, tmp_path: Path) -> tuple[list[str], Any]:
    options = fork_options(session, ForkRequest(0, SCRIPTED), session_path=tmp_path / "f.jsonl")
    runtime = build_runtime(dataclasses.replace(options, approve="ask", pace=float("inf")))
    asked: list[str] = []

    def on_event(event: Any, _signal: Any = None) -> None:
        if event.type == "permission_request":
            asked.append(event.args.get("command", event.tool_name))
            runtime.gate.decide(event.request_id, PermissionAnswer.allow_once())

    runtime.agent.subscribe(on_event)
    await runtime.agent.prompt(MIXED["prompt"])
    return asked, options


async def test_the_parent_s_approvals_are_not_asked_again(tmp_path: Path) -> None:
    parent = await record_with_person(tmp_path / "ws", MIXED, answers_for_mixed)
    session = read_session(parent.session_path)
    asked, options = await _fork_and_count_questions(session, tmp_path)
    assert asked == ["echo refused", "write_file"]  # denied, and allowed only as edited
    assert any("kept the parent's approvals of 1 later call" in n for n in options.fork.notes)


async def test_a_stranger_s_approvals_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = await record_with_person(tmp_path / "ws", MIXED, answers_for_mixed)
    session = read_session(parent.session_path)
    monkeypatch.setenv(SESSIONS_DIR_ENV, str(tmp_path / "another-key"))
    asked, options = await _fork_and_count_questions(session, tmp_path)
    assert asked == ["echo approved", "echo refused", "write_file"]
    assert any("not kept: the parent's approvals" in n for n in options.fork.notes)
