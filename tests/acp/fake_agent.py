"""A scripted ACP agent: JSON-RPC over stdio, for the tests (no library, no model).

    python fake_agent.py SCRIPT.json

The script is a list with one entry per `session/prompt`: a list of steps, run in
order. Each step is an object with one of these keys:

- "say" / "think": an agent message / thought chunk;
- "plan": the plan's entries; "mode": a `current_mode_update`; "commands": the
  slash commands (`available_commands_update`);
- "call": the fields of a `tool_call`; "update": the fields of a `tool_call_update`;
- "ask": a tool call id: `session/request_permission` with the four usual options; on
  a reject the call is reported failed and the turn ends (end_turn); on cancelled
  the prompt ends cancelled;
- "read" / "write" (with "content"): `fs/read_text_file` / `fs/write_text_file`;
  what the client answered (or its error) is said as a message;
- "terminal": a command line run through `terminal/create`, then
  `terminal/wait_for_exit`, `terminal/output`, `terminal/release`; with "call", the
  terminal is shown in that call first;
- "model": a text sent to the model at $ANTHROPIC_BASE_URL (Anthropic Messages, not
  streamed); its reply is said;
- "spawn": a command started in a session of its own (its pid is said);
- "exit": the process exits at once with this code; "garbage": a line that is not JSON;
- "hang": wait for `session/cancel`, then end the prompt cancelled;
- "stop": the stop reason to end with (default end_turn).

Every message the client sent is appended to the file named by $FAKE_ACP_LOG.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import sys
import threading
from typing import Any

OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject-always", "name": "Always reject", "kind": "reject_always"},
]

_lock = threading.Lock()
_ids = itertools.count(1000)
_waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
_requests: queue.Queue[dict[str, Any]] = queue.Queue()
_cancelled = threading.Event()
SESSION = "fake-session-1"


def send(message: dict[str, Any]) -> None:
    with _lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def ask_model(text: str) -> str:
    """POST `text` to the model at $ANTHROPIC_BASE_URL with the agent's key; its reply."""
    import urllib.request

    body = {
        "model": "claude-test",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": text}],
    }
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
            "anthropic-version": "2023-06-01",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the test's
        reply = json.loads(response.read())
    return "".join(b.get("text", "") for b in reply.get("content", []))


def log(message: dict[str, Any]) -> None:
    path = os.environ.get("FAKE_ACP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(message) + "\n")


def reader() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        log(message)
        if "method" not in message:
            box = _waiting.pop(message["id"], None)
            if box is not None:
                box.put(message)
        elif message["method"] == "session/cancel":
            _cancelled.set()
        else:
            _requests.put(message)
    _requests.put({"method": "eof"})


def call_client(method: str, params: dict[str, Any]) -> dict[str, Any]:
    request_id = next(_ids)
    box: queue.Queue[dict[str, Any]] = queue.Queue()
    _waiting[request_id] = box
    send({"id": request_id, "method": method, "params": {"sessionId": SESSION, **params}})
    return box.get()


def update(fields: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": fields}})


def say(text: str) -> None:
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def run_prompt(steps: list[dict[str, Any]]) -> str:
    _cancelled.clear()
    for step in steps:
        if _cancelled.is_set():
            return "cancelled"
        if "say" in step:
            say(step["say"])
        elif "think" in step:
            update(
                {
                    "sessionUpdate": "agent_thought_chunk",
                    "content": {"type": "text", "text": step["think"]},
                }
            )
        elif "plan" in step:
            update({"sessionUpdate": "plan", "entries": step["plan"]})
        elif "mode" in step:
            update({"sessionUpdate": "current_mode_update", "currentModeId": step["mode"]})
        elif "commands" in step:
            update(
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": step["commands"],
                }
            )
        elif "call" in step and "terminal" not in step:
            update({"sessionUpdate": "tool_call", **step["call"]})
        elif "update" in step:
            update({"sessionUpdate": "tool_call_update", **step["update"]})
        elif "ask" in step:
            answer = call_client(
                "session/request_permission",
                {"toolCall": {"toolCallId": step["ask"]}, "options": OPTIONS},
            )
            outcome = answer.get("result", {}).get("outcome", {})
            if outcome.get("outcome") == "cancelled":
                return "cancelled"
            if str(outcome.get("optionId", "")).startswith("reject"):
                update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": step["ask"],
                        "status": "failed",
                    }
                )
                say("The call was rejected; stopping.")
                return "end_turn"
        elif "read" in step:
            answer = call_client("fs/read_text_file", {"path": step["read"]})
            say(json.dumps(answer.get("result", answer.get("error"))) + "\n")
        elif "write" in step:
            answer = call_client(
                "fs/write_text_file", {"path": step["write"], "content": step["content"]}
            )
            say(json.dumps(answer.get("result", answer.get("error"))) + "\n")
        elif "terminal" in step:
            made = call_client("terminal/create", {"command": step["terminal"]})
            if "error" in made:
                say(json.dumps(made["error"]) + "\n")
                continue
            terminal = made["result"]["terminalId"]
            if "call" in step:
                update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": step["call"],
                        "status": "in_progress",
                        "content": [{"type": "terminal", "terminalId": terminal}],
                    }
                )
            exited = call_client("terminal/wait_for_exit", {"terminalId": terminal})
            output = call_client("terminal/output", {"terminalId": terminal})
            call_client("terminal/release", {"terminalId": terminal})
            if "call" in step:
                update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": step["call"],
                        "status": "completed",
                    }
                )
            say(
                json.dumps({"exit": exited.get("result"), "output": output["result"]["output"]})
                + "\n"
            )
        elif "spawn" in step:  # a child that leaves the agent's process group
            import subprocess

            child = subprocess.Popen(step["spawn"], start_new_session=True)
            say(json.dumps({"pid": child.pid}) + "\n")
        elif "model" in step:  # its model asked (Anthropic Messages), the reply said
            say(ask_model(step["model"]))
        elif "exit" in step:  # the agent dies mid-prompt
            os._exit(int(step["exit"]))
        elif "garbage" in step:  # a line that is not JSON-RPC
            with _lock:
                sys.stdout.write(step["garbage"] + "\n")
                sys.stdout.flush()
        elif "hang" in step:
            _cancelled.wait()
            return "cancelled"
        elif "stop" in step:
            return str(step["stop"])
    return "end_turn"


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        script: list[list[dict[str, Any]]] = json.load(f)
    threading.Thread(target=reader, daemon=True).start()
    prompts = iter(script)
    while True:
        message = _requests.get()
        method, request_id = message["method"], message.get("id")
        if method == "eof":
            return
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": True,
                    "promptCapabilities": {"image": True, "embeddedContext": True},
                },
                "agentInfo": {"name": "fake-agent", "version": "1.0"},
            }
        elif method in ("session/new", "session/load"):
            result = {
                "sessionId": SESSION,
                "modes": {
                    "currentModeId": "default",
                    "availableModes": [
                        {"id": "default", "name": "Default"},
                        {"id": "plan", "name": "Plan"},
                    ],
                },
            }
            if method == "session/load":
                result = {"modes": result["modes"]}
        elif method == "session/set_mode":
            update(
                {
                    "sessionUpdate": "current_mode_update",
                    "currentModeId": message["params"]["modeId"],
                }
            )
            result = {}
        elif method == "session/prompt":
            steps = next(prompts, [{"say": "(no more script)"}])

            # the prompt runs while the reader keeps taking messages (cancel, answers)
            def answer(steps: list[dict[str, Any]] = steps, request_id: Any = request_id) -> None:
                reason = run_prompt(steps)
                send({"id": request_id, "result": {"stopReason": reason}})

            threading.Thread(target=answer, daemon=True).start()
            continue
        else:
            send({"id": request_id, "error": {"code": -32601, "message": f"no method {method}"}})
            continue
        send({"id": request_id, "result": result})


if __name__ == "__main__":
    main()
