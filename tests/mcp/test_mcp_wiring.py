"""MCP servers wired like the app and the CLI wire them: through `build_runtime`
(permission gate and stepper included), over streamable HTTP, and headless."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.helpers import SERVERS, TOOLBOX, calls, mcp_run
from workbench.__main__ import main
from workbench.agent import ToolResultMessage
from workbench.bus_events import PermissionDecisionEvent, StepPausedEvent
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.stepper import Resume

ORDER = {"order": {"customer": "ann", "items": [{"sku": "abc", "quantity": 1}], "priority": "low"}}


def _scenario(*turns: dict[str, Any]) -> Scenario:
    return Scenario.model_validate({"name": "mcp", "turns": [*turns, {"text": "done"}]})


async def test_the_gate_and_breakpoints_treat_mcp_tools_like_any_other(tmp_path: Path) -> None:
    turn = calls(
        ("toolbox__snapshot", {}),
        ("toolbox__place_order", ORDER),
        ("toolbox__fail", {"reason": "x"}),
        ("toolbox__read_note", {}),
    )
    runtime = build_runtime(
        RunOptions(
            scenario=_scenario(turn),
            workspace=tmp_path,
            tools=[],
            mcp=[TOOLBOX],
            approve="rules",
            allow=["toolbox__snapshot", "toolbox__place_order"],
            deny=['mcp:toolbox(reason="*")'],
            breakpoints=["mcp:toolbox"],
        )
    )
    agent, stepper = runtime.agent, runtime.stepper
    paused: list[str] = []

    def answer_pauses(event: Any, _signal: Any = None) -> None:
        if isinstance(event, StepPausedEvent):
            paused.append(event.tool_name or "")
            edit = {"order": {**ORDER["order"], "customer": "edited"}}
            action = Resume.edit(edit) if event.tool_name == "toolbox__place_order" else "continue"
            if isinstance(action, Resume):
                with pytest.raises(ValueError, match="order.priority: Field required"):
                    stepper.resume(event.pause_id, Resume.edit({"order": {"customer": "x"}}))
            stepper.resume(event.pause_id, action)

    agent.subscribe(answer_pauses)
    events: list[Any] = []
    agent.subscribe(lambda e, _s=None: events.append(e))
    async with runtime.mcp.attach(agent):
        await agent.prompt("go")
    results = {m.tool_name: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    assert paused == ["toolbox__snapshot", "toolbox__place_order"]  # denied calls never pause
    assert not results["toolbox__snapshot"].is_error
    assert results["toolbox__place_order"].text.startswith("order for edited:")
    assert results["toolbox__fail"].text == (
        'Permission denied by rule toolbox__*(reason="*") (--deny)'
    )
    assert "needs approval (* (default))" in results["toolbox__read_note"].text
    decisions = [e for e in events if isinstance(e, PermissionDecisionEvent)]
    assert [d.decision for d in decisions] == ["allow", "allow", "deny", "deny"]


@pytest.fixture
def http_toolbox() -> Iterator[str]:
    """The toolbox served over streamable HTTP on a free loopback port; yields its URL."""
    yield from _served("--http", "/mcp")


@pytest.fixture
def sse_toolbox() -> Iterator[str]:
    """The toolbox served over the older HTTP+SSE transport; yields its URL."""
    yield from _served("--sse", "/sse")


def _served(flag: str, path: str) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "toolbox.py"), flag, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(1200):  # up to 60 s for the server to listen (a busy machine)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail("the HTTP toolbox exited at start")
                time.sleep(0.05)
        else:
            pytest.fail("the HTTP toolbox did not listen within 60 s")
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_streamable_http_server(http_toolbox: str) -> None:
    async with mcp_run(
        calls(("mcp__place_order", ORDER), ("mcp__slow_count", {"n": 2, "delay": 0.01})),
        servers=[],
        configured=[_http(http_toolbox)],
    ) as run:
        assert run.hub.report()[0].startswith(f"MCP server mcp: 17 tools ({http_toolbox})\n")
        await run.agent.prompt("go")
        assert run.result("mcp__place_order").text.startswith("order for ann: 1 items")
        assert run.result("mcp__slow_count").text == "counted to 2"
        assert len(run.of_type("tool_execution_update")) == 2


async def test_an_sse_server_from_the_command_line_with_a_header(sse_toolbox: str) -> None:
    from workbench.cli.args import build_parser, parse
    from workbench.mcp.config import servers_from_flags

    args = parse(
        build_parser(),
        ["--mcp-sse", sse_toolbox, "--mcp-header", "X-Test: 1", "--mcp-timeout", "15"],
    )
    (server,) = servers_from_flags(args.mcp_specs)
    assert server.transport == "sse" and server.headers == {"X-Test": "1"}
    assert server.startup_timeout == 15
    async with mcp_run(
        calls(("mcp__two_blocks", {}), ("mcp__slow_count", {"n": 2, "delay": 0.01})),
        servers=[],
        configured=[server.model_copy(update={"name": "mcp"})],
    ) as run:
        assert run.hub.report()[0].startswith(f"MCP server mcp: 17 tools ({sse_toolbox})\n")
        await run.agent.prompt("go")
        assert run.result("mcp__two_blocks").text == "first block:\nsecond"
        assert run.result("mcp__slow_count").text == "counted to 2"


def _http(url: str) -> Any:
    from workbench.mcp import McpServerConfig

    return McpServerConfig(name="mcp", url=url, headers={"X-Test": "1"})


def test_headless_with_mcp_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.json"
    turn = calls(("toolbox__place_order", ORDER), ("toolbox__fail", {"reason": "nope"}))
    scenario.write_text(_scenario(turn).model_dump_json(), encoding="utf-8")
    code = main(
        [
            "--headless",
            "order something",
            "--scenario",
            str(scenario),
            "--workspace",
            str(tmp_path),
            "--approve",
            "all",
            "--mcp",
            TOOLBOX,
            "--mcp",
            "no-such-mcp-server-cmd",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert f"workbench: MCP server toolbox: 17 tools ({TOOLBOX})" in err
    assert (
        "workbench: MCP server no-such-mcp-server-cmd failed to start: "
        "command not found: no-such-mcp-server-cmd"
    ) in err
    assert "order for ann: 1 items [abcx1 (red)] priority=low" in out
    assert "refused: nope" in out and "assistant done" in out


def test_headless_reads_servers_from_the_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f"[mcp.servers.box]\ncommand = {shlex.split(TOOLBOX)!r}\n".replace("'", '"'),
        encoding="utf-8",
    )
    scenario = tmp_path / "s.json"
    scenario.write_text(_scenario(calls(("box__snapshot", {}))).model_dump_json(), encoding="utf-8")
    code = main(
        [
            "--headless",
            "snap",
            "--scenario",
            str(scenario),
            "--workspace",
            str(tmp_path),
            "--config",
            str(config),
            "--allow",
            "mcp:box",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0 and "MCP server box: 17 tools" in err
    assert "✓ result box__snapshot" in out


def test_the_readme_example_runs_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "--headless",
            "--scenario",
            str(SERVERS / "toolbox_scenario.json"),
            "--workspace",
            str(tmp_path),
            "--mcp",
            TOOLBOX,
            "--allow",
            "mcp:toolbox",
        ]
    )
    out, _err = capsys.readouterr()
    assert code == 0
    assert "order.priority: Field required" in out
    assert "order for Ann: 2 items [WIDx2 (red)] priority=normal" in out
    assert "progress 5/5 (100%): step 5 of 5" in out and "counted to 5" in out
    assert "end: 3 turns, 4 tool calls" in out
