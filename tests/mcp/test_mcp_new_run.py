"""A new run (ctrl+n) keeps the running MCP servers: their tools join the new agent,
and a server offered the old workspace as a root is offered the new one and told
(`notifications/roots/list_changed`), instead of being started again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from tests.mcp.helpers import TOOLBOX, calls, mcp_run, scripted
from tests.support.notifications import notifications
from workbench.agent import Agent
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app


def sent(connection: Any, method: str) -> int:
    return sum(1 for e in connection.wire.entries if e.outgoing and e.method == method)


async def test_ctrl_n_keeps_the_servers_and_sends_the_new_root(tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {"name": "roots", "turns": [calls(("toolbox__roots", {})), {"text": "ok"}]}
    )
    runtime = build_runtime(
        RunOptions(scenario=scenario, tools=[], allow=["mcp:toolbox"], mcp=[TOOLBOX])
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        hub = runtime.mcp
        assert hub is not None
        with anyio.fail_after(30):
            while not hub.attached:
                await pilot.pause(0.05)
        connection = hub.connection("toolbox")
        assert sent(connection, "notifications/roots/list_changed") == 0
        await pilot.press("ctrl+n")
        with anyio.fail_after(30):
            while not any("MCP servers kept" in n.message for n in notifications(app)):
                await pilot.pause(0.05)
        fresh = app.runtime
        assert fresh is not runtime and fresh.workspace != runtime.workspace
        assert fresh.mcp is hub and connection.status == "ready"
        assert sent(connection, "initialize") == 1  # not started again
        assert sent(connection, "notifications/roots/list_changed") == 1
        assert connection.client.roots == [fresh.workspace.resolve()]
        names = [t.name for t in fresh.agent.state.tools]
        assert "toolbox__roots" in names
        assert not [t for t in runtime.agent.state.tools if t.source == "mcp:toolbox"]
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(30):
            while app.view_state.run_state != "finished":
                await pilot.pause(0.05)
    roots = fresh.agent.state.messages[-2].text
    assert roots == fresh.workspace.resolve().as_uri()


async def test_roots_edited_in_the_app_keep_all_but_the_workspace(tmp_path: Path) -> None:
    old, new, mine = (tmp_path / n for n in ("old", "new", "mine"))
    for folder in (old, new, mine):
        folder.mkdir()
    async with mcp_run(roots=[old]) as run:
        connection = run.hub.connection("toolbox")
        await run.hub.set_roots([old.resolve(), mine.resolve()], "toolbox")
        provider = scripted({"text": "x"})
        agent = Agent(stream_fn=provider, model=provider.model)
        told = await run.hub.move_to(agent, [new])
        assert told == ["toolbox"]
        assert connection.client.roots == [new, mine.resolve()]
        assert [t for t in agent.state.tools if t.source == "mcp:toolbox"]
        assert not [t for t in run.agent.state.tools if t.source == "mcp:toolbox"]
        result = await connection.call_tool("roots", {})
        assert result.content[0].text == f"{new.resolve().as_uri()} {mine.resolve().as_uri()}"
        assert await run.hub.move_to(agent, [new]) == []  # the same workspace: nothing sent
