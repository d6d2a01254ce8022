"""Each server's roots: the workspace and the directories its command names by default
(server-filesystem's allowed folders are not replaced), set per server in its config,
changed at run time for one server (it is told); and servers turned off in the config,
disabled and started again at run time, restarted while running."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.mcp.helpers import SERVERS, TOOLBOX, mcp_run
from workbench.mcp import McpServerConfig, server_from_command
from workbench.mcp.roots import default_roots, parse_roots, roots_for


def test_the_default_roots_are_the_workspace_and_the_directories_the_command_names(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = McpServerConfig(
        name="files",
        command=("npx", "-y", "@modelcontextprotocol/server-filesystem", str(shared), "--x"),
    )
    assert default_roots(config, [workspace]) == [workspace.resolve(), shared.resolve()]
    own = config.model_copy(update={"roots": ("sub", str(shared))})
    assert roots_for(own, [workspace]) == [(workspace / "sub").resolve(), shared.resolve()]
    assert roots_for(config.model_copy(update={"roots": ()}), [workspace]) == []


def test_typed_roots_must_be_directories(tmp_path: Path) -> None:
    assert parse_roots([".", ""], tmp_path) == [tmp_path.resolve()]
    try:
        parse_roots(["nowhere"], tmp_path)
    except ValueError as exc:
        assert str(exc) == "nowhere: not a directory"
    else:
        raise AssertionError("a missing directory was taken")


async def test_roots_change_for_one_server_only(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    second = server_from_command(TOOLBOX).model_copy(update={"name": "second"})
    async with mcp_run(roots=[tmp_path], configured=[second]) as run:
        await run.hub.set_roots([other], "toolbox")
        mine = await run.hub.connection("toolbox").call_tool("roots", {})
        theirs = await run.hub.connection("second").call_tool("roots", {})
        assert mine.content[0].text == other.resolve().as_uri()  # type: ignore[union-attr]
        assert theirs.content[0].text == tmp_path.resolve().as_uri()  # type: ignore[union-attr]


async def test_a_disabled_server_starts_at_run_time_and_can_be_disabled_again() -> None:
    off = McpServerConfig(
        name="off", command=(sys.executable, str(SERVERS / "toolbox.py")), enabled=False
    )
    async with mcp_run(configured=[off], servers=[]) as run:
        connection = run.hub.connection("off")
        assert connection.status == "disabled"
        assert run.hub.report() == [
            "MCP server off: disabled (enabled = false in flag; F7, r starts it)"
        ]
        assert not [t for t in run.agent.state.tools if t.source == "mcp:off"]
        await run.hub.restart("off")
        assert connection.status == "ready"
        assert [t for t in run.agent.state.tools if t.source == "mcp:off"]
        await run.hub.disable("off")
        assert connection.status == "disabled"
        assert not [t for t in run.agent.state.tools if t.source == "mcp:off"]


async def test_a_running_server_can_be_restarted() -> None:
    async with mcp_run() as run:
        connection = run.hub.connection("toolbox")
        before = connection.server_info
        await run.hub.restart("toolbox")
        assert connection.status == "ready" and connection.server_info == before
        result = await connection.call_tool("fail", {"reason": "r"})
        assert result.is_error and "r" in result.content[0].text  # type: ignore[union-attr]
