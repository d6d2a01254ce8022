"""The app starts MCP servers on mount (a worker): their tools get labels, failures
become notifications, a prompt sent meanwhile waits, and the inspector names the server."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.mcp.helpers import TOOLBOX, calls
from tests.support.notifications import notifications
from tests.widgets.helpers import wait_for
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app
from workbench.widgets.status_bar import StatusBar


async def test_the_app_attaches_mcp_tools_and_shows_the_server(tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {"name": "mcp", "turns": [calls(("toolbox__snapshot", {})), {"text": "done"}]}
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            allow=["mcp:toolbox"],
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
        messages = [n.message for n in notifications(app)]
        assert any(m.startswith("MCP server toolbox: 17 tools") for m in messages)
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


async def test_a_server_that_exits_while_idle_is_shown_and_restarted_from_the_palette(
    tmp_path: Path,
) -> None:
    scenario = Scenario.model_validate(
        {"name": "mcp", "turns": [calls(("toolbox__exit_soon", {"after": 0.1})), {"text": "ok"}]}
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            allow=["mcp:toolbox"],
            mcp=[TOOLBOX],
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(20):
            while not any("exited" in n.message for n in notifications(app)):
                await pilot.pause(0.05)
        exited = next(n.message for n in notifications(app) if "exited" in n.message)
        assert exited.startswith("MCP server toolbox exited: it exited while idle")
        assert "'Restart MCP server'" in exited
        assert runtime.mcp is not None and runtime.mcp.connections[0].status == "exited"
        status = app.screen.query_one(StatusBar)
        await wait_for(pilot, lambda: "MCP toolbox exited (F7)" in str(status.render()))

        await pilot.press("ctrl+p")
        await pilot.pause()
        for key in "Restart MCP":
            await pilot.press("space" if key == " " else key)
        with anyio.fail_after(5):
            while True:
                await pilot.pause(0.05)
                options = app.screen.query("CommandList").first().option_count  # type: ignore[attr-defined]
                if options:
                    break
        await pilot.press("enter")
        with anyio.fail_after(20):
            while not any("restarted" in n.message for n in notifications(app)):
                await pilot.pause(0.05)
        assert runtime.mcp.connections[0].status == "ready"
        assert any(
            n.message == "MCP server toolbox restarted: 17 tools" for n in notifications(app)
        )
        await wait_for(pilot, lambda: "MCP" not in str(status.render()))  # fine again


async def test_the_servers_view_shows_state_tools_and_logs_and_restarts(tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {
            "name": "mcp",
            "turns": [
                calls(("toolbox__chatty", {}), ("toolbox__grow", {})),
                calls(("toolbox__exit_soon", {"after": 0.1})),
                {"text": "ok"},
            ],
        }
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            allow=["mcp:toolbox"],
            mcp=[TOOLBOX, "no-such-mcp-server-cmd"],
            mcp_log_level="info",
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(20):
            while not any("exited" in n.message for n in notifications(app)):
                await pilot.pause(0.05)
        assert any(
            n.message.startswith("MCP server toolbox changed its tools (+toolbox__grown)")
            for n in notifications(app)
        )
        await pilot.press("f7")
        await pilot.pause()
        from textual.widgets import OptionList, Static

        from workbench.widgets.mcp_servers import McpServersScreen

        screen = app.screen
        assert isinstance(screen, McpServersScreen)
        servers = screen.query_one(OptionList)
        prompts = [str(servers.get_option_at_index(i).prompt) for i in range(2)]
        assert prompts[0].startswith("toolbox  exited")
        assert prompts[1].startswith("no-such-mcp-server-cmd  failed")
        details = str(screen.query_one("#mcp-server-details", Static).render())
        assert "Why it stopped\n  it exited while idle" in details
        assert "INFO [chatty] starting" in details
        assert "toolbox: exiting while idle" in details  # its stderr, kept after it exited
        assert "Place orders with place_order." in details  # its instructions

        await pilot.press("r")
        with anyio.fail_after(20):
            while runtime.mcp.connections[0].status != "ready":  # type: ignore[union-attr]
                await pilot.pause(0.05)
        # the view refreshes itself each second; a new process: the tool it grew is gone
        await wait_for(
            pilot,
            lambda: str(servers.get_option_at_index(0).prompt).startswith(
                "toolbox  ready  17 tools"
            ),
        )
        await pilot.press("down", "r")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, McpServersScreen)
