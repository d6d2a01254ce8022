"""Running the scripted fake ACP agent (`fake_agent.py`) under an `AcpRun`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from workbench.acp import AcpOptions, AcpRun

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")


@dataclass
class Fake:
    """A fake agent's script and the log of what the client sent it."""

    directory: Path
    script: list[list[dict[str, Any]]]
    workspace: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = self.directory / "ws"
        self.workspace.mkdir(exist_ok=True)
        (self.directory / "script.json").write_text(json.dumps(self.script))

    @property
    def log_path(self) -> Path:
        return self.directory / "client.jsonl"

    def command(self) -> list[str]:
        return [sys.executable, str(FAKE_AGENT), str(self.directory / "script.json")]

    def options(self, **overrides: Any) -> AcpOptions:
        values: dict[str, Any] = {
            "command": self.command(),
            "workspace": self.workspace,
            "env": {"FAKE_ACP_LOG": str(self.log_path)},
            "record": False,
        }
        values.update(overrides)
        return AcpOptions(**values)

    def run(self, **overrides: Any) -> AcpRun:
        return AcpRun(self.options(**overrides))

    def sent(self, method: str | None = None) -> list[dict[str, Any]]:
        """What the client sent, in order (only `method`'s requests, if given)."""
        if not self.log_path.exists():
            return []
        messages = [json.loads(line) for line in self.log_path.read_text().splitlines()]
        if method is None:
            return messages
        return [m for m in messages if m.get("method") == method]

    async def until(self, condition: Callable[[], Any]) -> None:
        """Wait until `condition()` holds of what the agent has read (an aborted
        prompt returns before the agent has read what the client sent it last)."""
        with anyio.fail_after(20):
            while not condition():
                await anyio.sleep(0.02)

    def answers(self) -> list[dict[str, Any]]:
        """The client's answers to the agent's requests (results and errors)."""
        return [m for m in self.sent() if "method" not in m]


def ask_call(
    call_id: str = "c1", command: str = "ls -la", tool: str | None = "Bash"
) -> list[dict[str, Any]]:
    """A shell call announced with its raw input, asked about, and run on an allow."""
    call: dict[str, Any] = {
        "toolCallId": call_id,
        "title": command,
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": command},
    }
    if tool is not None:
        call["_meta"] = {"claudeCode": {"toolName": tool}}
    return [
        {"call": call},
        {"ask": call_id},
        {"update": {"toolCallId": call_id, "status": "in_progress"}},
        {
            "update": {
                "toolCallId": call_id,
                "content": [{"type": "content", "content": {"type": "text", "text": "a.txt"}}],
            }
        },
        {"update": {"toolCallId": call_id, "status": "completed"}},
    ]
