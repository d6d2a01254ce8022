"""A hand-written stdio MCP server whose schemas hold a catastrophic regex.

`echo`'s input schema and `report`'s output schema both carry
`"pattern": "^(a|aa)+$"`; `report` returns structured content that makes a
backtracking matcher take minutes to say it does not match.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SLOW = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|aa)+$"}}}
TOOLS = [
    {"name": "echo", "inputSchema": SLOW},
    {"name": "report", "inputSchema": {"type": "object", "properties": {}}, "outputSchema": SLOW},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any]) -> None:
    method, rid = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if rid is None:
        return
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        value = "a" * 40 + "!"
        result = {
            "content": [{"type": "text", "text": value}],
            "structuredContent": {"s": value},
        }
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": rid, "result": result})


for line in sys.stdin:
    if line.strip():
        answer(json.loads(line))
