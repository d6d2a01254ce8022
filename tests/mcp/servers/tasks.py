"""A hand-written stdio MCP server with task-augmented tools (the SDK serves no tasks).

Like server-everything's `simulate-research-query`, its `research` tool requires task
augmentation (`execution.taskSupport: "required"`): a plain `tools/call` is refused;
a call with `task` answers at once with a task that works through three steps
(`statusMessage` "step N of 3", `step` seconds each) and completes with the result,
or fails when the topic is "fail". `tasks/get` tells a task's state, `tasks/result`
answers its result once it is over (waiting for it), `tasks/cancel` cancels it (and
says so on stderr). `plain` is an ordinary tool.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

TOOLS = [
    {
        "name": "research",
        "description": "Research a topic (a long-running task).",
        "inputSchema": {
            "type": "object",
            "properties": {"topic": {"type": "string"}, "step": {"type": "number"}},
            "required": ["topic"],
        },
        "execution": {"taskSupport": "required"},
    },
    {"name": "plain", "inputSchema": {"type": "object", "properties": {}}},
]

lock = threading.Lock()
tasks: dict[str, dict[str, Any]] = {}
results: dict[str, dict[str, Any]] = {}
done: dict[str, threading.Event] = {}


def send(message: dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def now() -> str:
    return datetime.now(UTC).isoformat()


def update(task_id: str, status: str, message: str | None) -> None:
    with lock:
        task = tasks[task_id]
        if task["status"] in ("completed", "failed", "cancelled"):
            return
        task.update(status=status, statusMessage=message, lastUpdatedAt=now())
    if status in ("completed", "failed", "cancelled"):
        done[task_id].set()


def work(task_id: str, topic: str, step: float) -> None:
    for n in range(1, 4):
        time.sleep(step)
        update(task_id, "working", f"step {n} of 3")
    time.sleep(step)
    if topic == "fail":
        results[task_id] = {
            "content": [{"type": "text", "text": "no sources found"}],
            "isError": True,
        }
        update(task_id, "failed", "no sources found")
    else:
        results[task_id] = {"content": [{"type": "text", "text": f"research on {topic}: done"}]}
        update(task_id, "completed", "done")


def wait_and_answer(rid: Any, task_id: str) -> None:
    done[task_id].wait()
    if tasks[task_id]["status"] == "cancelled":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "cancelled"}})
        return
    result = dict(results[task_id])
    result["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def answer(request: dict[str, Any]) -> None:
    method, rid = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if rid is None:
        return
    task_id = params.get("taskId")
    if method == "initialize":
        result: Any = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {
                "tools": {},
                "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": "tasks", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "plain":
        result = {"content": [{"type": "text", "text": "plain answer"}]}
    elif method == "tools/call" and "task" not in params:
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {
                    "code": -32600,
                    "message": (
                        "Tool 'research' requires task augmentation (taskSupport: 'required')"
                    ),
                },
            }
        )
        return
    elif method == "tools/call":
        task_id = f"task-{len(tasks) + 1}"
        arguments = params.get("arguments") or {}
        task = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": "starting",
            "createdAt": now(),
            "lastUpdatedAt": now(),
            "ttl": params["task"].get("ttl"),
            "pollInterval": 20,
        }
        tasks[task_id], done[task_id] = task, threading.Event()
        threading.Thread(
            target=work,
            args=(task_id, arguments.get("topic", ""), float(arguments.get("step", 0.05))),
            daemon=True,
        ).start()
        result = {"task": dict(task)}
    elif method == "tasks/get" and task_id in tasks:
        with lock:
            result = dict(tasks[task_id])
    elif method == "tasks/result" and task_id in tasks:
        threading.Thread(target=wait_and_answer, args=(rid, task_id), daemon=True).start()
        return
    elif method == "tasks/cancel" and task_id in tasks:
        update(task_id, "cancelled", "cancelled by the client")
        print(f"tasks: {task_id} cancelled", file=sys.stderr, flush=True)
        with lock:
            result = dict(tasks[task_id])
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": -32601, "message": f"no method {method}"},
            }
        )
        return
    send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    for line in sys.stdin:
        if line.strip():
            answer(json.loads(line))
