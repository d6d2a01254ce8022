"""What MCP servers do during a run is on the bus, so the session records it, the
timeline (live and in replay) shows it and export mentions it: a changed tool list
(`tools/list_changed`) and a server's request for a model reply (sampling)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.mcp.helpers import TOOLBOX, calls
from workbench.events import McpToolsChangedEvent, parse_event
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions import read_session
from workbench.sessions.export import to_json, to_markdown
from workbench.view.fold import fold


async def record_mcp_run(tmp_path: Path, *turns: dict, approve: str = "all") -> Path:  # type: ignore[type-arg]
    scenario = Scenario.model_validate({"name": "mcp", "turns": [*turns, {"text": "done"}]})
    path = tmp_path / "run.jsonl"
    runtime = build_runtime(RunOptions(
        scenario=scenario, workspace=tmp_path / "ws", tools=[], approve=approve,
        mcp=[TOOLBOX], session=path, pace=math.inf,
    ))
    assert runtime.mcp is not None
    async with runtime.mcp.attach(runtime.agent):
        await runtime.agent.prompt("go")
    return path


async def test_a_changed_tool_list_is_recorded_replayed_and_exported(tmp_path: Path) -> None:
    path = await record_mcp_run(
        tmp_path, calls(("toolbox__grow", {})), calls(("toolbox__grown", {}))
    )
    session = read_session(path)
    changes = [e for e in session.events if e.type == "mcp_tools_changed"]
    assert changes == [McpToolsChangedEvent(
        server="toolbox", added=["toolbox__grown"], removed=[], timestamp=changes[0].timestamp
    )]
    notices = [i for i in fold(list(session.events)).items if i.kind == "notice"]
    assert [n.text for n in notices] == [
        "MCP server toolbox changed its tools (+toolbox__grown); "
        "the next model request has the new list"
    ]
    markdown = to_markdown(session)
    assert "> MCP server toolbox changed its tools (+toolbox__grown)" in markdown
    # said after the turn whose call changed the list, before the next turn
    assert markdown.index("changed its tools") < markdown.index("## Turn 2")
    assert json.loads(to_json(session))["mcp_events"][0]["added"] == ["toolbox__grown"]


def test_sessions_without_the_new_events_still_read() -> None:
    old = {"type": "run_limit", "max_turns": 2, "turns": 2, "timestamp": 1.0}
    assert parse_event(old).type == "run_limit"
    new = parse_event({"type": "mcp_tools_changed", "server": "s", "timestamp": 1.0})
    assert new.added == [] and new.removed == []
