"""Ping: a server answers `ping` (F7, `p`, says in how long); a "ready" server that no
longer reads its input does not, is marked wedged, and `r` starts it again."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from tests.mcp.helpers import SERVERS
from tests.support.notifications import notifications
from workbench.agent import AbortController
from workbench.mcp import McpServerConfig
from workbench.mcp.failures import McpCallError
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app
from workbench.widgets.mcp_servers import McpServersScreen

HOSTILE = McpServerConfig(name="hostile", command=(sys.executable, str(SERVERS / "hostile.py")))


async def test_a_wedged_server_does_not_answer_ping_and_is_restarted(tmp_path: Path) -> None:
    from workbench.mcp.hub import McpHub

    hub = McpHub([HOSTILE])
    with anyio.fail_after(60):
        await hub.start()
        try:
            connection = hub.connection("hostile")
            assert await connection.ping() >= 0 and connection.unanswered_ping is None
            controller, wire = AbortController(), connection.wire
            async with anyio.create_task_group() as tg:

                async def wedge() -> None:
                    with pytest.raises(McpCallError):
                        await connection.call_tool("wedge", {}, signal=controller.signal)

                tg.start_soon(wedge)
                while not any(e.summary.startswith("tools/call wedge") for e in wire.entries):
                    await anyio.sleep(0.01)  # written before the ping: it is read first
                with pytest.raises(McpCallError, match="no answer to ping within 0.5s"):
                    await connection.ping(timeout=0.5)
                controller.abort("done")
            assert connection.status == "ready" and connection.unanswered_ping is not None
            assert connection.ping_ms is None
            await hub.restart("hostile")
            assert connection.unanswered_ping is None
            assert await connection.ping() >= 0
        finally:
            await hub.aclose()


async def test_p_in_the_servers_view_pings_and_says_so(tmp_path: Path) -> None:
    runtime = build_runtime(RunOptions(workspace=tmp_path, tools=[], mcp_servers=[HOSTILE]))
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        assert runtime.mcp is not None
        with anyio.fail_after(30):
            while not runtime.mcp.attached:
                await pilot.pause(0.05)
        await pilot.press("f7")
        with anyio.fail_after(10):
            while not isinstance(app.screen, McpServersScreen):
                await pilot.pause(0.05)
        await pilot.press("p")
        with anyio.fail_after(20):
            while not any("answered ping in" in n.message for n in notifications(app)):
                await pilot.pause(0.05)
        connection = runtime.mcp.connection("hostile")
        assert connection.ping_ms is not None
        assert sum(1 for e in connection.wire.entries if e.method == "ping") == 2  # asked, answered
