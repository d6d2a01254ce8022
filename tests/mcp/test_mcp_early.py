"""Stdio servers started before the SDK loads (`workbench.mcp.early`): the connection
adopts the running process (no second start), speaks to it, reads its stderr and ends
it; one nobody adopts is killed at exit; the environment is the SDK's own."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client import stdio as sdk

from tests.mcp.helpers import SERVERS
from workbench.mcp import McpServerConfig, early
from workbench.mcp.failures import McpCallError
from workbench.mcp.hub import McpHub

TOOLBOX = McpServerConfig(name="toolbox", command=(sys.executable, str(SERVERS / "toolbox.py")))


def test_the_inherited_environment_is_the_sdks() -> None:
    assert list(early.INHERITED) == list(sdk.DEFAULT_INHERITED_ENV_VARS)
    assert early.default_environment() == sdk.get_default_environment()


async def test_a_server_started_early_is_adopted_used_and_ended() -> None:
    early.start_early([TOOLBOX])
    ((process, _stderr, _tree),) = early._EARLY.values()
    pid = process.pid
    hub = McpHub([TOOLBOX])
    with anyio.fail_after(30):
        await hub.start()
        try:
            connection = hub.connection("toolbox")
            assert not early._EARLY  # taken
            result = await connection.call_tool("fail", {"reason": "early"})
            assert result.is_error and "early" in result.content[0].text
            with pytest.raises(McpCallError, match="crashing on purpose"):  # its stderr
                await connection.call_tool("crash", {"after": 0})
        finally:
            await hub.aclose()
    assert process.poll() == 3 and process.pid == pid  # the adopted one crashed
    assert early.take_early(TOOLBOX) is None  # a second start starts anew


def test_an_early_server_nobody_adopts_is_killed_at_exit(tmp_path: Path) -> None:
    other = TOOLBOX.model_copy(update={"name": "other"})
    early.start_early([other])
    ((process, _stderr, _tree),) = early._EARLY.values()
    assert signal.getsignal(signal.SIGTERM) is early._stopped  # until it is taken
    early._kill_unadopted()
    assert process.wait(timeout=10) is not None
    assert not early._EARLY and signal.getsignal(signal.SIGTERM) is not early._stopped
