"""Helpers for the session tests: record a real run, and small scripted scenarios."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, Runtime, build_runtime
from workbench.scratch import seed
from workbench.view.fold import ViewState

READ_A = {
    "name": "read-a",
    "prompt": "what is in a.txt?",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {
            "text": "Reading it.",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "list_directory", "arguments": {"path": "."}},
            ],
        },
        {"text": "It says alpha."},
    ],
}


def scenario(data: dict[str, Any] | str = "demo") -> Scenario:
    return Scenario.load(data) if isinstance(data, str) else Scenario.model_validate(data)


def runtime_for(workspace: Path, data: dict[str, Any] | str = "demo", **options: Any) -> Runtime:
    """A recording runtime on `data` in `workspace` (seeded), approving everything."""
    loaded = scenario(data)
    seed(workspace, loaded.workspace_files)
    options.setdefault("approve", "all")
    return build_runtime(
        RunOptions(
            scenario=loaded, workspace=workspace, pace=math.inf, tool_abort_grace=0.2, **options
        )
    )


async def record_run(
    workspace: Path, data: dict[str, Any] | str = "demo", **options: Any
) -> tuple[Runtime, ViewState]:
    """Run the scenario's prompt to the end, recording; returns the runtime and the live fold."""
    runtime = runtime_for(workspace, data, **options)
    live = ViewState()
    runtime.agent.subscribe(lambda event, _signal: live.apply(event))
    await runtime.agent.prompt(runtime.prompt)
    return runtime, live


def write_session(
    path: Path,
    prompt: str = "read a.txt",
    *,
    tool: str = "read_file",
    args: dict[str, Any] | None = None,
    result: str = "alpha",
    is_error: bool = False,
    denied: bool = False,
    reply: str = "done",
    created: float = 1_700_000_000_000.0,
    model: str = "scripted-demo",
    parent: Path | None = None,
    finished: bool = True,
    workspace: Path | str = "/tmp/ws",
) -> Path:
    """A small session written straight through the recorder (no agent runs): a prompt,
    one tool call (allowed or denied) with its result, and a reply."""
    from workbench.agent import (
        AgentEndEvent,
        AgentStartEvent,
        AssistantMessage,
        MessageEndEvent,
        TextContent,
        ToolCall,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
        ToolResultMessage,
        TurnEndEvent,
        TurnStartEvent,
        Usage,
        UserMessage,
    )
    from workbench.agent.tool import AgentToolResult
    from workbench.bus_events import PermissionDecisionEvent
    from workbench.sessions.header import ModelInfo, ParentInfo, SessionHeader
    from workbench.sessions.recorder import Recorder

    args = {"path": "a.txt"} if args is None else args
    header = SessionHeader(
        created=created,
        model=ModelInfo(id=model, provider="scripted"),
        workspace=str(workspace),
        parent=ParentInfo(path=str(parent), turn=1, events=3) if parent is not None else None,
    )
    call = ToolCall(id="call_1", name=tool, arguments=args)
    asked = AssistantMessage(
        content=[TextContent(text="Looking."), call],
        stop_reason="toolUse",
        usage=Usage(input=10, output=5, total_tokens=15),
    )
    output = AgentToolResult(content=[TextContent(text=result)], is_error=is_error or denied)
    answer = AssistantMessage(
        content=[TextContent(text=reply)], usage=Usage(input=20, output=3, total_tokens=23)
    )
    outcome = ToolResultMessage(
        tool_call_id="call_1", tool_name=tool, content=output.content, is_error=output.is_error
    )
    events: list[Any] = [
        AgentStartEvent(),
        TurnStartEvent(),
        MessageEndEvent(message=UserMessage(content=prompt)),
        MessageEndEvent(message=asked),
        PermissionDecisionEvent(
            tool_call_id="call_1",
            tool_name=tool,
            decision="deny" if denied else "allow",
            decided_by="rule",
        ),
        ToolExecutionStartEvent(tool_call_id="call_1", tool_name=tool, args=args),
        ToolExecutionEndEvent(
            tool_call_id="call_1", tool_name=tool, result=output, is_error=output.is_error
        ),
        MessageEndEvent(message=outcome),
        TurnEndEvent(message=asked, tool_results=[outcome]),
        TurnStartEvent(),
        MessageEndEvent(message=answer),
    ]
    if finished:
        events += [TurnEndEvent(message=answer, tool_results=[]), AgentEndEvent(messages=[])]
    recorder = Recorder(path, header)
    for index, event in enumerate(events):
        recorder.write(event, created + 100.0 * index)
    recorder.close()
    return path


# Four turns: an edit, a write, a read, a reply (workspace checkpoints at every turn).
EDIT_THEN_WRITE = {
    "name": "edit-then-write",
    "prompt": "change things",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "a.txt", "old_text": "alpha", "new_text": "beta"},
                }
            ]
        },
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "Done."},
    ],
}
