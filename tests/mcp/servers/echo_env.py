"""A stdio MCP server with one tool, `env`: the value of one of its environment
variables (to see what the workbench started it with). Its arguments are ignored."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("echo-env")


@server.tool()
def env(name: str) -> str:
    """The value of environment variable `name` (or `(unset)`), and the arguments."""
    return f"{os.environ.get(name, '(unset)')} {' '.join(sys.argv[1:])}".strip()


if __name__ == "__main__":
    server.run()
