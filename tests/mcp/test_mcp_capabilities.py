"""The client side of MCP: the workspace offered as the server's root, the server's
log lines kept per server, a changed tool list taking effect, and instructions."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from tests.mcp.helpers import SERVERS, TOOLBOX, calls, mcp_run
from workbench.mcp import McpHub, McpServerConfig, resolve_servers, server_from_command
from workbench.mcp.hub import with_instructions


async def test_the_workspace_is_offered_as_the_servers_root(tmp_path: Path) -> None:
    async with mcp_run(calls(("toolbox__roots", {})), roots=[tmp_path]) as run:
        await run.agent.prompt("go")
        assert run.result("toolbox__roots").text == tmp_path.resolve().as_uri()
        other = tmp_path / "other"
        other.mkdir()
        await run.hub.set_roots([other])
        connection = run.hub.connection("toolbox")
        result = await connection.call_tool("roots", {})
        assert result.content[0].text == other.resolve().as_uri()  # type: ignore[union-attr]


async def test_a_servers_log_lines_are_kept_and_passed_on() -> None:
    async with mcp_run(calls(("toolbox__chatty", {})), log_level="debug") as run:
        seen: list[tuple[str, str]] = []
        run.hub.on_log = lambda c, line: seen.append((c.name, line))
        await run.agent.prompt("go")
        assert run.result("toolbox__chatty").text == "talked"
        with anyio.fail_after(5):
            while len(seen) < 2:
                await anyio.sleep(0.02)
        expected = ["INFO [chatty] starting", 'WARNING {"disk": "low"}']
        assert seen == [("toolbox", line) for line in expected]
        assert list(run.hub.connection("toolbox").client.server_log) == expected


async def test_a_changed_tool_list_takes_effect_for_the_next_request() -> None:
    async with mcp_run(calls(("toolbox__grow", {})), calls(("toolbox__grown", {}))) as run:
        changes: list[tuple[list[str], list[str]]] = []
        run.hub.on_tools_changed = lambda c, added, removed: changes.append((added, removed))
        await run.agent.prompt("go")
        assert run.result("toolbox__grow").text == "grew"
        assert changes == [(["toolbox__grown"], [])]
        assert not run.result("toolbox__grown").is_error
        assert run.result("toolbox__grown").text == "grown"
        names = [t.name for t in run.agent.state.tools]
        assert names.count("toolbox__grown") == 1 and len(names) == len(set(names))


async def test_instructions_are_shown_and_added_only_when_asked(tmp_path: Path) -> None:
    async with mcp_run() as run:
        assert run.hub.connection("toolbox").instructions == (
            "Place orders with place_order.\nBe polite."
        )
        report = run.hub.report()[0].splitlines()
        assert report[-1] == (
            "  its instructions (use_instructions = true adds them to the system prompt): "
            "Place orders with place_order."
        )
        assert "Instructions from MCP server" not in run.agent.state.system_prompt
    server = server_from_command(TOOLBOX).model_copy(update={"use_instructions": True})
    async with mcp_run(servers=[], configured=[server], system_prompt="Be terse.") as run:
        assert run.agent.state.system_prompt == (
            "Be terse.\n\nInstructions from MCP server toolbox:\n"
            "Place orders with place_order.\nBe polite."
        )


def test_instructions_of_servers_that_are_not_ready_are_left_out() -> None:
    hub = McpHub(
        resolve_servers(
            configured=[McpServerConfig(name="a", command=("x",), use_instructions=True)]
        )
    )
    hub.connections[0].instructions = "never started"
    assert with_instructions("p", hub.connections) == "p"


async def test_the_wire_keeps_every_message_both_ways_with_times_and_masks_secrets() -> None:
    async with mcp_run(calls(("toolbox__two_blocks", {}))) as run:
        run.hub.mask(lambda text: text.replace("second", "[REDACTED:X]"))
        await run.agent.prompt("go")
        entries = list(run.hub.connection("toolbox").wire.entries)
    summaries = [(e.outgoing, e.summary) for e in entries]
    assert summaries[0][0] is True and summaries[0][1].startswith("initialize #")
    assert (True, "notifications/initialized") in summaries
    call = next(e for e in entries if e.summary.startswith("tools/call two_blocks"))
    answer = next(e for e in entries if " of tools/call (" in e.summary)
    assert call.outgoing and not answer.outgoing and answer.at >= call.at
    assert answer.summary.endswith(" ms)")
    assert "[REDACTED:X]" in answer.text and "second" not in answer.text


async def test_the_log_level_changes_at_run_time() -> None:
    hostile = McpServerConfig(name="hostile", command=(sys.executable, str(SERVERS / "hostile.py")))
    async with mcp_run(configured=[hostile]) as run:
        said = await run.hub.set_log_level("hostile", "warning")
        assert said == "MCP server hostile now logs at warning and above"
        assert run.hub.connection("hostile").client.log_level == "warning"
        said = await run.hub.set_log_level("toolbox", "debug")  # it has no logging
        assert said == "MCP server toolbox refused log level debug: Method not found"
