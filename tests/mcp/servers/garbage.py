"""A hand-written stdio "MCP server" that answers garbage (the SDK would not let one).

It completes the handshake and lists two tools, then misbehaves on every call:
`noise` writes a line that is not JSON-RPC at all and never answers; `misshapen`
answers with a result whose fields have the wrong types; `hang` never answers, and
the reason of a `notifications/cancelled` is written to stderr; `bad_notes` sends
malformed notifications before it answers. With `--surrogates`: `surrogate` answers
text holding the JSON escape of a lone surrogate and writes one (UTF-8 encoded) to
stderr; `raw_bytes` answers with bytes that are not UTF-8.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {"name": "noise", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "misshapen", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "hang", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "bad_notes", "inputSchema": {"type": "object", "properties": {}}},
]


def deep_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


EXTRA: list[Any] = []
if "--bad-tool" in sys.argv:  # one tool that does not parse among good ones
    EXTRA = [{"name": "broken", "inputSchema": "not a schema"}, {"description": "no name"}]
if "--deep-schema" in sys.argv:  # JSON nested too deeply to be read at all
    sys.setrecursionlimit(100_000)
    EXTRA = [{"name": "deep", "inputSchema": deep_schema(2500)}]
if "--surrogates" in sys.argv:  # text that is not valid Unicode: escaped, and raw bytes
    EXTRA = [
        {"name": "surrogate", "inputSchema": {"type": "object", "properties": {}}},
        {"name": "raw_bytes", "inputSchema": {"type": "object", "properties": {}}},
    ]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, check_circular=False) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any]) -> None:
    method, rid = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if rid is None:  # a notification: a cancellation's reason goes to stderr
        if method == "notifications/cancelled":
            print(f"cancelled: {params.get('reason')}", file=sys.stderr, flush=True)
        return
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "garbage", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS + EXTRA}
    elif method == "tools/call" and params.get("name") == "hang":
        return
    elif method == "tools/call" and params.get("name") == "bad_notes":
        for note in (
            {"method": "notifications/progress", "params": {"progressToken": {}, "progress": "x"}},
            {"method": "notifications/message", "params": "not an object"},
            {"method": "notifications/tools/list_changed", "params": [1, 2]},
            {"method": "notifications/made_up"},
        ):
            send({"jsonrpc": "2.0", **note})
        result = {"content": [{"type": "text", "text": "noted"}]}
    elif method == "tools/call" and params.get("name") == "surrogate":
        sys.stderr.buffer.write(b"stderr \xed\xa0\x80 lone\n")  # a lone surrogate, UTF-8 encoded
        sys.stderr.flush()
        result = {"content": [{"type": "text", "text": "half \ud800 a pair"}]}
    elif method == "tools/call" and params.get("name") == "raw_bytes":
        sys.stdout.buffer.write(
            b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", '
            b'"text": "raw \xed\xa0\x80 bytes"}]}}\n' % rid
        )
        sys.stdout.flush()
        return
    elif method == "tools/call" and params.get("name") == "noise":
        sys.stdout.write("this is not json at all\n")
        sys.stdout.flush()
        return
    elif method == "tools/call":
        result = {"content": "not a list", "isError": "perhaps"}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": rid, "result": result})


for line in sys.stdin:
    if line.strip():
        answer(json.loads(line))
