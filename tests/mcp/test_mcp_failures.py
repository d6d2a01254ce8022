"""Servers that fail: crash mid-call, write garbage, never start. Each gives a clear
error (in the hub's report and in the call's result) and the run goes on."""

from __future__ import annotations

import shlex
import sys
import time

from tests.mcp.helpers import SERVERS, TOOLBOX, calls, mcp_run
from workbench.mcp import McpServerConfig
from workbench.mcp.config import name_for_command

PY = shlex.quote(sys.executable)


async def test_a_server_that_crashes_mid_call() -> None:
    async with mcp_run(
        calls(("toolbox__crash", {})),
        calls(("toolbox__fail", {"reason": "x"}), ("toolbox-2__snapshot", {})),
        servers=[TOOLBOX, TOOLBOX],
    ) as run:
        await run.agent.prompt("go")
        crash = run.result("toolbox__crash")
        assert crash.is_error
        assert crash.text.startswith(
            "MCP server toolbox died during tools/call crash: the connection closed before "
            "it answered (the server process exited or crashed)"
        )
        assert crash.text.endswith("Its last stderr lines:\n  toolbox: crashing on purpose")
        assert crash.details == {"server": "toolbox", "tool": "crash", "exited": True}
        later = run.result("toolbox__fail")
        assert later.is_error and later.text == (
            "MCP server toolbox is not running: it exited or crashed during tools/call crash"
        )
        assert not run.result("toolbox-2__snapshot").is_error  # the other server goes on
        assert run.agent.state.messages[-1].content[0].text == "done"  # type: ignore[union-attr]
        assert [c.name for c in run.hub.failed] == ["toolbox"]
        assert run.hub.report()[0] == (
            "MCP server toolbox exited: it exited or crashed during tools/call crash"
        )


async def test_a_server_that_answers_garbage() -> None:
    garbage = shlex.join([sys.executable, str(SERVERS / "garbage.py")])
    started = time.monotonic()
    async with mcp_run(
        calls(("garbage__noise", {}), ("toolbox__snapshot", {})),
        calls(("garbage__misshapen", {})),
        servers=[garbage, TOOLBOX],
    ) as run:
        await run.agent.prompt("go")
        noise = run.result("garbage__noise")
        assert noise.is_error and noise.text.startswith(
            "MCP server garbage wrote something that is not a JSON-RPC message (Invalid JSON"
        )
        assert "got 'this is not json at all'" in noise.text
        assert not run.result("toolbox__snapshot").is_error
        misshapen = run.result("garbage__misshapen")  # a stray line does not end the session
        assert misshapen.is_error and misshapen.text.startswith(
            "MCP server garbage answered tools/call misshapen with an invalid result:"
        )
    assert time.monotonic() - started < 10


async def test_servers_that_never_start() -> None:
    sleepy = McpServerConfig(
        name="sleepy",
        command=(sys.executable, "-c", "import time; time.sleep(60)"),
        startup_timeout=1.0,
    )
    code = "import sys; print('boom: MEMO_TOKEN is not set', file=sys.stderr); sys.exit(4)"
    noisy = f"{PY} -c {shlex.quote(code)}"
    async with mcp_run(
        calls(("toolbox__snapshot", {}), ("sleepy__anything", {})),
        servers=["definitely-not-a-command-xyz", noisy, TOOLBOX],
        configured=[sleepy],
    ) as run:
        report = run.hub.report()
        assert report[0] == (
            "MCP server sleepy failed to start: no answer to initialize within 1s "
            "(is it an MCP server speaking over stdio?)"
        )
        assert report[1] == (
            "MCP server definitely-not-a-command-xyz failed to start: "
            "command not found: definitely-not-a-command-xyz"
        )
        assert report[2] == (
            f"MCP server {name_for_command([sys.executable])} failed to start: it exited "
            "(or closed the connection) before "
            "answering initialize\nIts last stderr lines:\n  boom: MEMO_TOKEN is not set"
        )
        assert report[3].startswith("MCP server toolbox: 17 tools")
        assert {t.source for t in run.agent.state.tools} == {"mcp:toolbox"}
        await run.agent.prompt("go")  # the run goes on with the tools that did start
        assert not run.result("toolbox__snapshot").is_error
        assert run.result("sleepy__anything").text == "Tool sleepy__anything not found"
