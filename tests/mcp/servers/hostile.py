"""A hand-written stdio MCP server that tries to hang, flood or outlive its client.

Tools:
- `chatter`: from now on writes a log notification every few milliseconds, and goes
  on writing after its stdin closes (it never exits by itself then);
- `spawn`: starts a child that leaves the process group (`setsid`) and sleeps; its
  pid goes to the file named by `PIDS_FILE` (the server's own pid is written there
  at start);
- `big` (`megabytes`): answers with one JSON line of that size;
- `storm` (`count`): sends that many `notifications/tools/list_changed`, then answers;
- `hang`: never answers (a `notifications/cancelled` for it is written to stderr);
- `wedge`: stops reading for an hour: it answers nothing more, not even `ping`.

Resources: `note://counter`, which counts up three times once subscribed to
(`notifications/resources/updated` each time). SIGTERM is ignored. With
`--endless-pages`, `tools/list` always gives a next cursor; with `--slow-start`, the
server waits a minute before it reads anything.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

signal.signal(signal.SIGTERM, signal.SIG_IGN)
ENDLESS = "--endless-pages" in sys.argv
EMPTY = {"type": "object", "properties": {}}
TOOLS: list[dict[str, Any]] = [
    {"name": "chatter", "inputSchema": EMPTY},
    {"name": "spawn", "inputSchema": EMPTY},
    {
        "name": "big",
        "inputSchema": {"type": "object", "properties": {"megabytes": {"type": "number"}}},
    },
    {
        "name": "storm",
        "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}},
    },
    {"name": "hang", "inputSchema": EMPTY},
    {"name": "wedge", "inputSchema": EMPTY},
]
LOCK = threading.Lock()
PIDS = os.environ.get("PIDS_FILE")


def note_pid(pid: int) -> None:
    if PIDS:
        with open(PIDS, "a") as handle:
            handle.write(f"{pid}\n")


def write(text: str) -> None:
    with LOCK:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message))


def chatter() -> None:
    n = 0
    while True:
        n += 1
        params = {"level": "info", "logger": "chatter", "data": f"still here {n}"}
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
        time.sleep(0.005)


COUNTER = [0]


def count_up(uri: str) -> None:
    """A subscribed resource changes three times."""
    for _ in range(3):
        time.sleep(0.2)
        COUNTER[0] += 1
        params = {"uri": uri}
        send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": params})


def text_result(rid: Any, text: str) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})


def call(rid: Any, name: str, args: dict[str, Any]) -> None:
    if name == "chatter":
        threading.Thread(target=chatter, daemon=True).start()
        text_result(rid, "chattering")
    elif name == "spawn":
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        note_pid(child.pid)
        text_result(rid, f"spawned {child.pid}")
    elif name == "big":
        size = int(float(args.get("megabytes", 1)) * 1_000_000)
        text_result(rid, "x" * size)
    elif name == "storm":
        count = int(args.get("count", 1000))
        for _ in range(count):
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text_result(rid, f"sent {count}")
    elif name == "wedge":
        time.sleep(3600)
    # hang: no answer


def answer(request: dict[str, Any]) -> None:
    method, rid = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if rid is None:
        if method == "notifications/cancelled":
            print(f"cancelled: {params.get('reason')}", file=sys.stderr, flush=True)
        return
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {
                "tools": {"listChanged": True},
                "logging": {},
                "resources": {"subscribe": True},
            },
            "serverInfo": {"name": "hostile", "version": "1"},
        }
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "tools/list":
        page = {"tools": TOOLS}
        if ENDLESS:
            cursor = str(int((params.get("cursor") or "0")) + 1)
            page = {"tools": TOOLS if cursor == "1" else [], "nextCursor": cursor}
        send({"jsonrpc": "2.0", "id": rid, "result": page})
    elif method == "tools/call":
        call(rid, params.get("name", ""), params.get("arguments") or {})
    elif method == "resources/list":
        resource = {"uri": "note://counter", "name": "counter"}
        send({"jsonrpc": "2.0", "id": rid, "result": {"resources": [resource]}})
    elif method == "resources/read":
        contents = [{"uri": params.get("uri"), "text": f"count {COUNTER[0]}"}]
        send({"jsonrpc": "2.0", "id": rid, "result": {"contents": contents}})
    elif method == "resources/subscribe":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
        threading.Thread(target=count_up, args=(params.get("uri"),), daemon=True).start()
    elif method == "ping" or method == "logging/setLevel":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        send({"jsonrpc": "2.0", "id": rid, "error": error})


def main() -> None:
    note_pid(os.getpid())
    if "--slow-start" in sys.argv:
        time.sleep(60)
    for line in sys.stdin:
        if line.strip():
            answer(json.loads(line))
    while True:  # stdin closed: stay (and go on chattering if asked to)
        time.sleep(1)


if __name__ == "__main__":
    main()
