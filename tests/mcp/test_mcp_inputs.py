"""mcp.json `${input:ID}`s: never sent literally; given once a run, by
`$WORKBENCH_MCP_INPUT_<ID>` or by the person in the app; headless without it, the
server fails to start naming the input and its variable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from textual.widgets import Input

from tests.mcp.helpers import SERVERS, calls
from workbench.mcp.config import load_mcp_json
from workbench.mcp.hub import McpHub
from workbench.mcp.variables import McpInput
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app
from workbench.widgets.mcp_input import McpInputModal

KEY = McpInput(id="api-key", description="Your key", password=True)


def mcp_json(tmp_path: Path, *names: str) -> Path:
    """An mcp.json whose servers (echo_env.py) take `${input:api-key}` in their env and
    `${input:region}` in their arguments."""
    inputs = [
        {"id": "api-key", "type": "promptString", "description": "Your key", "password": True},
        {"id": "region", "type": "promptString"},
    ]
    entry = {
        "command": sys.executable,
        "args": [str(SERVERS / "echo_env.py"), "--region=${input:region}"],
        "env": {"ECHO_KEY": "${input:api-key}"},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"inputs": inputs, "mcpServers": dict.fromkeys(names, entry)}))
    return path


def test_an_input_is_listed_and_never_left_literally(tmp_path: Path) -> None:
    (server,) = load_mcp_json(mcp_json(tmp_path, "echo"))
    assert server.inputs == (KEY, McpInput(id="region"))
    assert "${input" not in json.dumps(server.model_dump(exclude={"inputs"}))
    assert server.target.endswith("'--region=${input:region}'")  # shown as written
    filled = server.with_inputs({"api-key": "k-1", "region": "eu"})
    assert filled.env == {"ECHO_KEY": "k-1"} and filled.command is not None
    assert filled.command[-1] == "--region=eu" and filled.inputs == ()
    assert KEY.env_name == "WORKBENCH_MCP_INPUT_API_KEY"


async def test_headless_without_the_input_the_server_fails_naming_it(tmp_path: Path) -> None:
    path = mcp_json(tmp_path, "echo")
    hub = McpHub(load_mcp_json(path))
    with anyio.fail_after(30):
        await hub.start()
        await hub.aclose()
    (line,) = hub.report()
    assert line == (
        f"MCP server echo failed to start: {path} asks for ${{input:api-key}} (Your key), "
        "which only a person can give: set WORKBENCH_MCP_INPUT_API_KEY in the workbench's "
        "environment (or start the app, which asks for it)"
    )


async def test_the_environment_gives_the_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_MCP_INPUT_API_KEY", "key-from-env")
    monkeypatch.setenv("WORKBENCH_MCP_INPUT_REGION", "eu")
    hub = McpHub(load_mcp_json(mcp_json(tmp_path, "echo")))
    with anyio.fail_after(30):
        await hub.start()
        try:
            result = await hub.connections[0].call_tool("env", {"name": "ECHO_KEY"})
        finally:
            await hub.aclose()
    assert result.content[0].text == "key-from-env --region=eu"
    wire = [e.text for e in hub.connections[0].wire.entries]
    assert not any("key-from-env" in text for text in wire)  # a password input is masked
    assert any("[REDACTED:input api-key]" in text for text in wire)


async def test_the_app_asks_once_for_servers_that_share_an_input(tmp_path: Path) -> None:
    servers = load_mcp_json(mcp_json(tmp_path, "one", "two"))
    scenario = Scenario.model_validate(
        {"name": "inputs", "turns": [calls(("two__env", {"name": "ECHO_KEY"})), {"text": "ok"}]}
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path / "ws",
            tools=[],
            allow=["mcp:two"],
            mcp_servers=servers,
            session=tmp_path / "run.jsonl",
        )
    )
    app = make_app(runtime, subtitle="test")
    asked: list[str] = []
    async with app.run_test(size=(140, 44)) as pilot:
        with anyio.fail_after(30):
            for answer in ("typed-key", "us"):
                while not isinstance(app.screen, McpInputModal):
                    await pilot.pause(0.05)
                await pilot.pause()
                modal = app.screen
                asked.append(modal.spec.id)
                assert modal.query_one("#input-value", Input).password == modal.spec.password
                await pilot.press(*answer)
                await pilot.click("#give")
                while app.screen is modal:
                    await pilot.pause(0.05)
            assert runtime.mcp is not None
            while any(c.status != "ready" for c in runtime.mcp.connections):
                await pilot.pause(0.05)
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(30):
            while app.view_state.run_state != "finished":
                await pilot.pause(0.05)
    assert asked == ["api-key", "region"]  # each once for both servers, as declared
    assert runtime.agent.state.messages[-2].text == "typed-key --region=us"
    recorded = (tmp_path / "run.jsonl").read_text()
    header = json.loads(recorded.splitlines()[0])
    assert "typed-key" not in json.dumps(header)  # the session keeps no input


async def test_an_input_not_given_in_the_app_fails_the_start_and_says_how(
    tmp_path: Path,
) -> None:
    servers = load_mcp_json(mcp_json(tmp_path, "echo"))
    runtime = build_runtime(
        RunOptions(workspace=tmp_path / "ws", tools=[], mcp_servers=servers, session=None)
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        with anyio.fail_after(30):
            while not isinstance(app.screen, McpInputModal):
                await pilot.pause(0.05)
            await pilot.pause()
            await pilot.click("#cancel")
            assert runtime.mcp is not None
            while runtime.mcp.connections[0].status != "failed":
                await pilot.pause(0.05)
    assert runtime.mcp.connections[0].error == (
        f"{servers[0].source} asks for ${{input:api-key}} (Your key), which was not given "
        "(F7, r asks again; or set WORKBENCH_MCP_INPUT_API_KEY)"
    )


async def test_a_connection_nobody_gives_inputs_to_never_starts(tmp_path: Path) -> None:
    from workbench.mcp.client import McpConnection

    marker = tmp_path / "started"
    (server,) = load_mcp_json(mcp_json(tmp_path, "echo"))
    server = server.model_copy(update={"command": ("touch", str(marker))})
    connection = McpConnection(server)
    with anyio.fail_after(10):
        await connection.run()
    assert connection.status == "failed" and not marker.exists()
    assert connection.error == "nobody gives its inputs (${input:api-key}, ${input:region})"
