"""A server is someone else's code: what it sends that does not parse costs only itself
(one bad tool, one malformed notification), is said clearly, and never reaches stderr."""

from __future__ import annotations

import shlex
import sys

import anyio
import pytest

from tests.mcp.helpers import SERVERS, calls, mcp_run
from workbench.mcp.client import McpConnection
from workbench.mcp.config import server_from_command


def garbage(*flags: str) -> str:
    return shlex.join([sys.executable, str(SERVERS / "garbage.py"), *flags])


async def test_one_tool_that_does_not_parse_costs_only_itself() -> None:
    async with mcp_run(servers=[garbage("--bad-tool")]) as run:
        names = {t.name for t in run.agent.state.tools}
        assert names == {
            "garbage__noise",
            "garbage__misshapen",
            "garbage__hang",
            "garbage__bad_notes",
        }
        report = run.hub.report()[0].splitlines()
        assert report[0].startswith("MCP server garbage: 4 tools")
        assert report[1:] == [
            "  tool 'broken' (#5 in tools/list) was left out: inputSchema: "
            "Input should be a valid dictionary",
            "  tool #6 in tools/list was left out: name: Field required",
        ]


async def test_a_schema_nested_too_deeply_fails_the_start_at_once_and_says_why() -> None:
    connection = McpConnection(server_from_command(garbage("--deep-schema")))
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        with anyio.fail_after(10):  # not the 20 s startup timeout
            await connection.wait_settled()
        connection.stop()
    assert connection.status == "failed"
    assert connection.error is not None
    assert connection.error.startswith(
        "its answer while starting could not be read: Invalid JSON: recursion limit exceeded"
    )
    assert "(JSON nested too deeply: a tool's schema, probably)" in connection.error


async def test_malformed_notifications_are_logged_quietly_and_the_call_goes_on(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with mcp_run(calls(("garbage__bad_notes", {})), servers=[garbage()]) as run:
        await run.agent.prompt("go")
        result = run.result("garbage__bad_notes")
        assert not result.is_error and result.text == "noted"
        log = list(run.hub.connection("garbage").log)
        assert "Failed to validate notification: notifications/progress" in log
        assert any(line.startswith("ignored a malformed notification") for line in log)
    assert "Traceback" not in capfd.readouterr().err
