"""The built-in demo scenario, end to end, on the built-in tools behind the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.agent import Agent, AssistantMessage, ToolResultMessage
from workbench.bus_events import PermissionDecisionEvent, PermissionRequestEvent
from workbench.permissions import PermissionAnswer, PermissionGate
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.scratch import scratch_workspace
from workbench.tools import builtin_tools


def demo_agent(tmp_path: Path) -> tuple[Agent, Path, Scenario, list[Any]]:
    scenario = Scenario.load("demo")
    workspace = scratch_workspace(scenario, parent=tmp_path)
    provider = ScriptedProvider(scenario)
    agent = Agent(stream_fn=provider, model=provider.model, tools=builtin_tools(workspace))
    events: list[Any] = []
    agent.subscribe(lambda e, _s: events.append(e))
    return agent, workspace, scenario, events


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


async def test_demo_runs_on_the_builtin_tools_with_everything_approved(tmp_path: Path) -> None:
    agent, workspace, scenario, events = demo_agent(tmp_path)
    agent.before_tool_call = PermissionGate.for_workspace(
        workspace, publish=agent.publish, policy="all"
    )
    await agent.prompt(scenario.prompt)
    first = {r.tool_call_id: r for r in results(agent)[:5]}
    by_name = [(r.tool_name, r.is_error) for r in first.values()]
    assert by_name == [
        ("list_directory", False),
        ("read_file", False),
        ("read_file", True),  # docs/setup.md is missing
        ("search_files", True),  # malformed JSON arguments
        ("web_search", True),  # not a tool
    ]
    texts = [r.text for r in first.values()]
    assert texts[0].splitlines() == ["README.md", "config.json", "scripts/", "src/"]
    assert texts[2] == "File not found: docs/setup.md"
    assert texts[4] == "Tool web_search not found"
    edit_bad, edit_good, check, reread = results(agent)[5:]
    assert edit_bad.is_error and "edits: Input should be a valid list" in edit_bad.text
    assert not edit_good.is_error, edit_good.text
    config = json.loads((workspace / "config.json").read_text())
    assert config["apiBaseUrl"] == "http://127.0.0.1:11434/v1"
    assert not check.is_error, check.text
    assert check.details["exit_code"] == 0
    assert check.text.endswith("OK: apiBaseUrl = http://127.0.0.1:11434/v1, model = gpt-4o-mini")
    assert "apiBaseUrl" in reread.text
    updates = [e for e in events if e.type == "tool_execution_update"]
    assert [u.partial_result.details["lines"][0] for u in updates][:2] == [
        "[1/4] loading config.json...",
        "[2/4] checking required keys...",
    ]
    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text.startswith("**Done.**")
    decided = [e for e in events if isinstance(e, PermissionDecisionEvent)]
    assert {(d.tool_name, d.decided_by) for d in decided} == {
        ("list_directory", "rule"),
        ("read_file", "rule"),
        ("edit_file", "policy"),
        ("run_command", "policy"),
    }


async def test_demo_with_the_edit_denied_takes_the_other_branch(tmp_path: Path) -> None:
    agent, workspace, scenario, events = demo_agent(tmp_path)
    gate = PermissionGate.for_workspace(workspace, publish=agent.publish)
    agent.before_tool_call = gate

    async def answer(event: Any, _signal: Any) -> None:
        if isinstance(event, PermissionRequestEvent):
            gate.decide(event.request_id, PermissionAnswer.deny("not now"))

    agent.subscribe(answer)
    before = (workspace / "config.json").read_text()
    await agent.prompt(scenario.prompt)
    assert (workspace / "config.json").read_text() == before
    denied = [r for r in results(agent) if r.tool_name == "edit_file"][-1]
    assert denied.is_error and denied.text == "Permission denied by the user: not now"
    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.text.startswith("I did not change config.json")
    requests = [e for e in events if isinstance(e, PermissionRequestEvent)]
    assert [(r.tool_name, r.suggested_pattern) for r in requests] == [
        ("edit_file", 'edit_file(path="config.json")')
    ]
