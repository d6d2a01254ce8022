"""A stdio MCP server that leaves processes behind: one in its process group, one in
a session of its own (setsid). Their pids go to the file named by `$PIDS_FILE`.
Tool `exit_soon` makes the server exit on its own shortly after answering."""

from __future__ import annotations

import os
import subprocess
import threading

from mcp.server.mcpserver import MCPServer

server = MCPServer("spawner", log_level="WARNING")


def _spawn() -> None:
    quiet = {name: subprocess.DEVNULL for name in ("stdin", "stdout", "stderr")}
    grouped = subprocess.Popen(["sleep", "60"], **quiet)
    detached = subprocess.Popen(["sleep", "60"], start_new_session=True, **quiet)
    with open(os.environ["PIDS_FILE"], "w") as out:
        out.write(f"{grouped.pid} {detached.pid}\n")


@server.tool()
def exit_soon() -> str:
    threading.Timer(0.2, os._exit, (0,)).start()
    return "bye"


if __name__ == "__main__":
    _spawn()
    server.run("stdio")
