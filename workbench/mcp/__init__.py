"""MCP servers as tool sources (outside the runtime: `workbench.agent` never imports this).

- `config`: which servers to start (`--mcp`, `--mcp-url`, `[mcp.servers.NAME]` in
  the config file) and their names; no SDK import.
- `client`: one server's session, kept open in a long-lived task (`McpConnection`).
- `tools`: its tools as `AgentTool`s named `server__tool` (`source="mcp:server"`).
- `hub`: `McpHub` starts them all and attaches their tools to an agent.

`McpHub`, `McpConnection` and `McpCallError` load the SDK, so they are imported
on first use: building a runtime without MCP servers never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.mcp.config import (
    McpServerConfig,
    load_mcp_servers,
    resolve_servers,
    server_from_command,
    server_from_url,
)

if TYPE_CHECKING:
    from workbench.mcp.client import McpCallError, McpConnection
    from workbench.mcp.hub import McpHub

_LAZY = {
    "McpHub": "workbench.mcp.hub",
    "McpConnection": "workbench.mcp.client",
    "McpCallError": "workbench.mcp.client",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "McpCallError",
    "McpConnection",
    "McpHub",
    "McpServerConfig",
    "load_mcp_servers",
    "resolve_servers",
    "server_from_command",
    "server_from_url",
]
