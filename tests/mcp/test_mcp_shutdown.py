"""No server can keep the workbench from ending, nor outlive it: ctrl+q, SIGTERM and
SIGHUP stop every server first (one that writes on after its stdin closed and
ignores SIGTERM included) and end its whole process tree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp.client import stdio as sdk

from tests.mcp.helpers import calls
from tests.mcp.test_mcp_processes import alive, wait_dead
from tests.widgets.helpers import wait_for
from workbench.mcp import McpHub, McpServerConfig, bounds
from workbench.mcp.client import McpConnection
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app

HOSTILE = Path(__file__).parent / "servers" / "hostile.py"


def hostile(pids: Path, *flags: str) -> McpServerConfig:
    return McpServerConfig(
        name="hostile", command=(sys.executable, str(HOSTILE), *flags), env={"PIDS_FILE": str(pids)}
    )


SHORT_GRACE = 0.2
"""Seconds each step of stopping a server waits (stdin closed, SIGTERM, what is left)
where how long it waits is not what a test is about."""


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step of the stop escalates after SHORT_GRACE: stdin closed, then SIGTERM,
    then SIGKILL (the hostile server ignores SIGTERM, so it goes through all three)."""
    monkeypatch.setattr(sdk, "PROCESS_TERMINATION_TIMEOUT", SHORT_GRACE)
    monkeypatch.setattr(sdk, "FORCE_KILL_TIMEOUT", SHORT_GRACE)
    monkeypatch.setattr(bounds, "SERVER_TREE_GRACE", SHORT_GRACE)


WORKBENCH_WITH_SHORT_GRACE = (
    "import runpy; from mcp.client import stdio; from workbench.mcp import bounds; "
    f"stdio.PROCESS_TERMINATION_TIMEOUT = stdio.FORCE_KILL_TIMEOUT = {SHORT_GRACE}; "
    f"bounds.SERVER_TREE_GRACE = {SHORT_GRACE}; "
    "runpy.run_module('workbench', run_name='__main__', alter_sys=True)"
)
"""`python -m workbench`, with the short grace of `short_grace`."""


def pids_in(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


async def test_shutdown_ends_a_server_that_chatters_on_and_its_detached_child(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    hub = McpHub([hostile(pids)])
    connection: McpConnection = hub.connections[0]
    with anyio.fail_after(40):
        async with anyio.create_task_group() as tg:

            async def hold() -> None:  # as the app's worker holds them
                await hub.start()
                try:
                    await anyio.sleep_forever()
                finally:
                    await hub.aclose()

            tg.start_soon(hold)
            await connection.wait_settled()
            assert connection.status == "ready"
            await connection.call_tool("chatter", {})
            await connection.call_tool("spawn", {})
            started = time.monotonic()
            await hub.shutdown()
            took = time.monotonic() - started
            tg.cancel_scope.cancel()
    server, child = pids_in(pids)
    assert not alive(server) and not alive(child)
    assert took < 12  # with the real grace periods (the other tests shorten them)


def app_with_hostile(tmp_path: Path, pids: Path):  # type: ignore[no-untyped-def]
    scenario = Scenario.model_validate(
        {
            "name": "chatter",
            "prompt": "go",
            "turns": [calls(("hostile__chatter", {}), ("hostile__spawn", {})), {"text": "done"}],
        }
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            mcp_servers=[hostile(pids)],
            allow=["mcp:hostile"],
            record=False,
        )
    )
    return make_app(runtime, subtitle="test")


@pytest.mark.parametrize("how", ["ctrl+q", "SIGTERM", "SIGHUP"])
@pytest.mark.usefixtures("short_grace")
async def test_quitting_the_app_ends_every_server_process_first(tmp_path: Path, how: str) -> None:
    pids = tmp_path / "pids"
    app = app_with_hostile(tmp_path, pids)
    with anyio.fail_after(60):
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=30)
            assert len(pids_in(pids)) == 2
            if how == "ctrl+q":
                await pilot.press("ctrl+q")
            else:
                os.kill(os.getpid(), getattr(signal, how))
            await wait_for(pilot, lambda: not app.is_running, timeout=30)
        # ended before the app did, not by the interpreter's exit
        assert not any(alive(p) for p in pids_in(pids))
    assert await wait_dead(pids_in(pids), within=0.1)


def headless(tmp_path: Path, pids: Path, *flags: str) -> subprocess.Popen[str]:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(HOSTILE), *flags]}
    server["env"] = {"PIDS_FILE": str(pids)}  # type: ignore[assignment]
    config.write_text(json.dumps({"mcpServers": {"hostile": server}}))
    scenario = tmp_path / "scenario.json"
    turns = [calls(("hostile__chatter", {}), ("hostile__spawn", {})), calls(("hostile__hang", {}))]
    scenario.write_text(json.dumps({"name": "s", "prompt": "go", "turns": turns}))
    command = [sys.executable, "-c", WORKBENCH_WITH_SHORT_GRACE, "--headless", "--no-record"]
    command += ["--scenario", str(scenario), "--mcp-config", str(config)]
    command += ["--allow", "mcp:hostile", "--workspace", str(tmp_path)]
    return subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


async def wait_until(condition: Callable[[], bool], within: float = 30.0) -> None:
    with anyio.fail_after(within):
        while not condition():
            await anyio.sleep(0.05)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
async def test_a_signal_ends_a_headless_run_and_its_servers(tmp_path: Path, how: str) -> None:
    pids = tmp_path / "pids"
    proc = headless(tmp_path, pids)
    try:
        await wait_until(lambda: pids.exists() and len(pids_in(pids)) == 2)
        proc.send_signal(getattr(signal, how))
        await wait_until(lambda: proc.poll() is not None)
        _, err = proc.communicate()
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert f"workbench: stopped by {how}; the MCP servers were stopped" in err
    assert "Traceback" not in err
    assert not any(alive(p) for p in pids_in(pids))


async def test_ctrl_c_while_the_servers_start_stops_them_without_a_traceback(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    proc = headless(tmp_path, pids, "--slow-start")
    try:
        await wait_until(lambda: pids.exists() and len(pids_in(pids)) == 1)
        proc.send_signal(signal.SIGINT)
        await wait_until(lambda: proc.poll() is not None)
        _, err = proc.communicate()
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "stopped by SIGINT while the MCP servers were starting" in err
    assert "Traceback" not in err
    assert not any(alive(p) for p in pids_in(pids))
