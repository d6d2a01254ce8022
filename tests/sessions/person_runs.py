"""Recording runs a person answered: approvals, denials with a reason, edits, and hand
edits between two prompts (the re-run tests reproduce them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.sessions.helpers import runtime_for
from workbench.permissions.answers import PermissionAnswer
from workbench.runtime import Runtime

Answer = Callable[[Any], PermissionAnswer]

MIXED = {
    "name": "mixed",
    "prompt": "tidy up",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {
            "text": "Working.",
            "tool_calls": [
                {"name": "run_command", "arguments": {"command": "echo approved"}},
                {"name": "run_command", "arguments": {"command": "echo refused"}},
                {"name": "write_file", "arguments": {"path": "b.txt", "content": "model\n"}},
                {"name": "read_file", "arguments": {"path": "a.txt"}},
            ],
        },
        {"text": "Done."},
        {
            "text": "Again.",
            "tool_calls": [{"name": "run_command", "arguments": {"command": "cat a.txt"}}],
        },
        {"text": "Done again."},
    ],
}
"""A person allows the first command, denies the second with a reason, edits the write;
the read is allowed by the default rules. A second prompt reads what a hand edit made."""


def answers_for_mixed(request: Any) -> PermissionAnswer:
    command = request.args.get("command", "")
    if request.tool_name == "write_file":
        return PermissionAnswer.edit({"path": "b.txt", "content": "edited by a person\n"})
    if command == "echo refused":
        return PermissionAnswer.deny("not today")
    return PermissionAnswer.allow_once()


async def record_with_person(
    workspace: Path,
    data: dict[str, Any],
    answer: Answer,
    *,
    second_prompt: str | None = None,
    between: Callable[[Path], None] | None = None,
    **options: Any,
) -> Runtime:
    """Record `data` with every question answered by `answer` (a person, live), then
    (optionally) change files by hand and send `second_prompt`."""
    runtime = runtime_for(workspace, data, approve="ask", **options)

    def on_event(event: Any, _signal: Any = None) -> None:
        if event.type == "permission_request":
            runtime.gate.decide(event.request_id, answer(event))

    runtime.agent.subscribe(on_event)
    await runtime.agent.prompt(runtime.prompt)
    if second_prompt is not None:
        if between is not None:
            between(workspace)
        await runtime.agent.prompt(second_prompt)
    return runtime
