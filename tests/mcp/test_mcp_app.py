"""The app starts MCP servers on mount (a worker): their tools get labels, failures
become notifications, a prompt sent meanwhile waits, and the inspector names the server."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.mcp.helpers import TOOLBOX, calls
from widgets.app import make_app
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime


async def test_the_app_attaches_mcp_tools_and_shows_the_server(tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {"name": "mcp", "turns": [calls(("toolbox__snapshot", {})), {"text": "done"}]}
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario, workspace=tmp_path, tools=[], allow=["mcp:toolbox"],
            mcp=[TOOLBOX, "no-such-mcp-server-cmd"],
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")  # sent before the servers are up: it waits for them
        with anyio.fail_after(20):
            while app.view_state.run_state != "finished":
                await pilot.pause(0.05)
        await pilot.pause()
        assert app.labels["toolbox__place_order"] == "Place an order"
        assert app.sources["toolbox__snapshot"] == "mcp:toolbox"
        messages = [n.message for n in app._notifications]
        assert any(m.startswith("MCP server toolbox: 7 tools") for m in messages)
        assert any(
            "MCP server no-such-mcp-server-cmd failed to start: command not found" in m
            for m in messages
        )
        assert app.inspector.record is not None
        assert app.inspector.record.name == "toolbox__snapshot"
        assert not app.inspector.record.is_error
        head = app.inspector.plain_lines()[0]
        assert head.startswith("toolbox__snapshot  mcp:toolbox")
    assert runtime.agent.state.tools == []  # the worker's exit stopped the servers
