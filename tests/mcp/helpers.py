"""Helpers for the MCP tests: the toolbox server's command line, and an Agent on the
scripted model with MCP servers attached through the real hub and client."""

from __future__ import annotations

import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from workbench.agent import Agent, ToolExecutionEndEvent, ToolResultMessage
from workbench.mcp import McpHub, McpServerConfig, resolve_servers
from workbench.providers.scripted import Scenario, ScriptedProvider

SERVERS = Path(__file__).parent / "servers"
TOOLBOX = shlex.join([sys.executable, str(SERVERS / "toolbox.py")])
"""`--mcp` value that starts the test server (named `toolbox`)."""
TEST_TIMEOUT = 30.0


def scripted(*turns: dict[str, Any]) -> ScriptedProvider:
    """A scripted model playing `turns` (dicts in the scenario file's format)."""
    return ScriptedProvider(Scenario.model_validate({"name": "mcp", "turns": list(turns)}))


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One turn asking for tool calls: `calls(("toolbox__fail", {"reason": "x"}), ...)`."""
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


@dataclass
class Run:
    agent: Agent
    hub: McpHub
    events: list[Any] = field(default_factory=list)

    def results(self) -> list[ToolResultMessage]:
        return [m for m in self.agent.state.messages if isinstance(m, ToolResultMessage)]

    def result(self, tool: str, nth: int = 0) -> ToolResultMessage:
        return [r for r in self.results() if r.tool_name == tool][nth]

    def ends(self) -> list[ToolExecutionEndEvent]:
        return [e for e in self.events if isinstance(e, ToolExecutionEndEvent)]

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@asynccontextmanager
async def mcp_run(
    *turns: dict[str, Any],
    servers: list[str] | None = None,
    configured: list[McpServerConfig] | None = None,
    roots: list[Path] | None = None,
    log_level: Any = None,
    **agent_options: Any,
) -> AsyncIterator[Run]:
    """An Agent on the scripted `turns` with the MCP servers attached (default: the
    toolbox); every bus event is recorded in `run.events`. A test that hangs fails
    after `TEST_TIMEOUT` seconds instead."""
    provider = scripted(*turns, {"text": "done"})
    agent = Agent(stream_fn=provider, model=provider.model, **agent_options)
    commands = [TOOLBOX] if servers is None else servers
    hub = McpHub(
        resolve_servers(commands, configured=configured or []),
        roots=roots or [],
        log_level=log_level,
    )
    run = Run(agent, hub)
    agent.subscribe(lambda event, _signal=None: run.events.append(event))
    with anyio.fail_after(TEST_TIMEOUT):
        async with hub.attach(agent):
            yield run
