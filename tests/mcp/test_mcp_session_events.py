"""What MCP servers do during a run is on the bus, so the session records it, the
timeline (live and in replay) shows it and export mentions it: a changed tool list
(`tools/list_changed`) and a server's request for a model reply (sampling)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from tests.mcp.helpers import TOOLBOX, calls, mcp_run
from tests.mcp.test_mcp_requests import EchoModel
from workbench.agent.types import Model
from workbench.bus_events import McpToolsChangedEvent, parse_event
from workbench.mcp.requests import PolicyAsker, sampling_event
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions import read_session
from workbench.sessions.export import to_json, to_markdown
from workbench.view.fold import fold


async def record_mcp_run(tmp_path: Path, *turns: dict[str, Any], approve: str = "all") -> Path:
    """Record a run of the scripted `turns` with the toolbox server (its tools allowed)."""
    scenario = Scenario.model_validate({"name": "mcp", "turns": [*turns, {"text": "done"}]})
    path = tmp_path / "run.jsonl"
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path / "ws",
            tools=[],
            approve=approve,
            allow=["mcp:toolbox"],
            mcp=[TOOLBOX],
            session=path,
            pace=math.inf,
        )
    )
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
    assert changes == [
        McpToolsChangedEvent(
            server="toolbox", added=["toolbox__grown"], removed=[], timestamp=changes[0].timestamp
        )
    ]
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


@pytest.mark.parametrize("approve", ["all", "none"])
async def test_sampling_is_a_line_under_the_call_that_asked(approve: str) -> None:
    async with mcp_run(calls(("toolbox__summarize", {"text": "a long\ntext"}))) as run:
        run.hub.asker = PolicyAsker(approve)
        run.hub.use_model(EchoModel(), Model(id="echo-1", provider="test"))
        await run.agent.prompt("go")
    (event,) = run.of_type("mcp_sampling")
    state = fold(run.events)
    (notice,) = [i for i in state.items if i.kind == "notice"]
    (call,) = state.calls.values()
    if approve == "all":
        assert (event.decision, event.request, event.reply) == (
            "sent",
            "a long\ntext",
            "short: a long\ntext",
        )
        assert notice.text == "↳ toolbox asked the model: a long text → short: a long text"
    else:
        assert (event.decision, event.reply) == ("declined", None)
        assert notice.text == (
            "↳ toolbox asked the model: a long text → declined: "
            "the user declined the sampling request"
        )
        assert notice.level == "warning"
    assert ("sampling: " + event.decision, notice.text) in [(e[1], e[2]) for e in call.events]


def test_an_edited_request_says_so_and_shows_what_was_sent() -> None:
    def params(text: str) -> mcp_types.CreateMessageRequestParams:
        return mcp_types.CreateMessageRequestParams(
            messages=[
                mcp_types.SamplingMessage(
                    role="user", content=mcp_types.TextContent(type="text", text=text)
                )
            ],
            max_tokens=5,
        )

    reply = mcp_types.CreateMessageResult(
        role="assistant", content=mcp_types.TextContent(type="text", text="ok"), model="m"
    )
    same = sampling_event("s", params("asked"), params("asked"), reply)
    edited = sampling_event("s", params("asked"), params("mine " * 100), reply)
    assert same.decision == "sent"
    assert edited.decision == "edited" and edited.request.startswith("mine mine")
    assert len(edited.text) < 300 and edited.text.endswith("(edited) → ok")
    error = mcp_types.ErrorData(code=-32603, message="boom")
    failed = sampling_event("s", params("x"), None, error)
    assert failed.text == "↳ s asked the model: x → failed: boom"


async def test_a_declined_sampling_request_is_recorded_and_exported(tmp_path: Path) -> None:
    path = await record_mcp_run(
        tmp_path, calls(("toolbox__summarize", {"text": "hello"})), approve="rules"
    )
    session = read_session(path)
    assert [e.decision for e in session.events if e.type == "mcp_sampling"] == ["declined"]
    assert "> ↳ toolbox asked the model: hello → declined: the user declined" in (
        to_markdown(session)
    )
    assert json.loads(to_json(session))["mcp_events"][0]["decision"] == "declined"
