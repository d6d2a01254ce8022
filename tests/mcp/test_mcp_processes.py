"""A stdio MCP server's whole process tree ends with it: children in its process
group and `setsid`'d ones, whether the workbench stops it or it exits by itself."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import psutil

from workbench.agent import Agent
from workbench.mcp import McpHub, McpServerConfig
from workbench.providers.scripted import Scenario, ScriptedProvider

SPAWNER = Path(__file__).parent / "servers" / "spawner.py"


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def wait_dead(pids: list[int], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        await anyio.sleep(0.05)
    return False


def hub_for(pids_file: Path) -> McpHub:
    config = McpServerConfig(
        name="spawner", command=(sys.executable, str(SPAWNER)), env={"PIDS_FILE": str(pids_file)}
    )
    return McpHub([config])


def agent(*turns: dict) -> Agent:
    provider = ScriptedProvider(Scenario.model_validate({"name": "m", "turns": list(turns)}))
    return Agent(stream_fn=provider, model=provider.model)


async def test_stopping_the_server_ends_its_detached_children(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    with anyio.fail_after(30):
        async with hub_for(pids_file).attach(agent({"text": "hi"})) as hub:
            assert [c.status for c in hub.connections] == ["ready"]
            pids = [int(p) for p in pids_file.read_text().split()]
            assert all(alive(p) for p in pids)
    assert await wait_dead(pids)


async def test_a_server_that_exits_by_itself_takes_its_children_with_it(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    a = agent({"tool_calls": [{"name": "spawner__exit_soon", "arguments": {}}]}, {"text": "done"})
    with anyio.fail_after(30):
        async with hub_for(pids_file).attach(a):
            await a.prompt("go")
            pids = [int(p) for p in pids_file.read_text().split()]
            assert await wait_dead(pids)  # while the workbench still runs


HOSTILE = Path(__file__).parent / "servers" / "hostile_schema.py"


async def test_a_servers_schema_regexes_are_time_bounded_in_and_out() -> None:
    value = "a" * 40 + "!"
    a = agent(
        {"tool_calls": [{"name": "hostile__echo", "arguments": {"s": value}}]},
        {"tool_calls": [{"name": "hostile__report", "arguments": {}}]},
        {"text": "done"},
    )
    config = McpServerConfig(name="hostile", command=(sys.executable, str(HOSTILE)))
    started = time.monotonic()
    with anyio.fail_after(60):
        async with McpHub([config]).attach(a):
            await a.prompt("go")
    results = [m for m in a.state.messages if m.role == "toolResult"]
    assert [r.is_error for r in results] == [True, True]
    echo, report = results[0].text, results[1].text
    assert "Validating arguments for tool hostile__echo failed: Regular expression" in echo
    assert "failed on tools/call report: RegexTimeout" in report
    # unbounded, each match would take hours; a loaded machine took 23 s for the two
    # one-second budgets and the server's start
    assert time.monotonic() - started < 45
