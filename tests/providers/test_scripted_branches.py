"""Scenario branches on aborted calls, and the demo's replies after an abort."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from workbench.agent import AssistantMessage, ToolResultMessage, UserMessage
from workbench.agent.config import LlmContext
from workbench.providers.scripted import (
    Branch,
    ResultMatch,
    Scenario,
    ScriptedProvider,
    ScriptedTurn,
)
from workbench.runtime import RunOptions, build_runtime


def result(text: str, *, is_error: bool = True, details: Any = None) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id="c1",
        tool_name="edit_file",
        content=[{"type": "text", "text": text}],
        is_error=is_error,
        details=details,
    )


def test_aborted_matches_the_loops_aborted_results() -> None:
    aborted = ResultMatch(tool="edit_file", aborted=True)
    assert aborted.matches([result("Operation aborted", details={"aborted": True})])
    assert aborted.matches([result("Operation aborted while waiting for permission")])
    assert not aborted.matches([result("Denied by the user")])
    assert not aborted.matches([result("Edited config.json", is_error=False)])
    assert ResultMatch(aborted=False).matches([result("Denied by the user")])


def test_a_branch_answers_the_last_calls_even_after_the_user_spoke() -> None:
    scenario = Scenario(
        name="t",
        turns=[
            ScriptedTurn(text="asks"),
            ScriptedTurn(
                text="The edit is in.",
                branches=[
                    Branch(when=ResultMatch(aborted=True), turn=ScriptedTurn(text="aborted"))
                ],
            ),
        ],
    )
    provider = ScriptedProvider(scenario)
    messages = [
        UserMessage(content="go"),
        AssistantMessage(content=[{"type": "text", "text": "asks"}], stop_reason="toolUse"),
        result("Operation aborted", details={"aborted": True}),
        UserMessage(content="go on"),
    ]
    assert provider.pick_turn(LlmContext("", messages, [])).text == "aborted"


def test_no_results_matches_a_reply_to_the_user_only() -> None:
    assert ResultMatch(no_results=True).matches([])
    assert not ResultMatch(no_results=True).matches([result("x")])


async def test_the_demo_after_ctrl_c_at_the_edit_does_not_claim_the_edit(tmp_path: Path) -> None:
    runtime = build_runtime(RunOptions(approve="ask", record=False))
    agent = runtime.agent

    def abort_at_the_edit(event: Any, _signal: Any = None) -> None:
        if event.type == "permission_request" and event.tool_name == "edit_file":
            agent.abort("Cancelled by the user (ctrl+c)")

    agent.subscribe(abort_at_the_edit)
    with anyio.fail_after(20):
        await agent.prompt(runtime.prompt)
        await agent.prompt("go on")
    replies = [m.text for m in agent.state.messages if isinstance(m, AssistantMessage)]
    assert "The edit is in" not in replies[-1]
    assert "aborted" in replies[-1] and "unchanged" in replies[-1]
    assert '"apiBaseUrl"' not in (runtime.workspace / "config.json").read_text()
    with anyio.fail_after(20):
        await agent.prompt("try again")
    assert "passes" not in agent.state.messages[-1].text
    assert "new run" in agent.state.messages[-1].text


def test_a_misspelt_condition_is_refused_not_matched() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        ResultMatch.model_validate({"tool": "edit_file", "abortd": True})
