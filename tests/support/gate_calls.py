"""Calls for the permission gate's tests: a call's context as the runtime builds it, and
one scripted turn of calls through the real runtime (gate, tools, results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.agent import (
    AgentContext,
    AgentTool,
    AssistantMessage,
    BeforeToolCallContext,
    ToolCall,
    ToolResultMessage,
)
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.tools import builtin_tools


def builtin_tool(ws: Path, name: str, may_read: Any = None) -> AgentTool:
    """The built-in tool `name` on workspace `ws` (`may_read`: the gate's read check)."""
    return next(t for t in builtin_tools(ws, may_read) if t.name == name)


def call_context(tool: AgentTool, args: dict[str, Any], call_id: str = "c1") -> Any:
    """What `before_tool_call` gets for a model's call of `tool` with `args`: the
    arguments prepared and validated, as the runtime does before asking."""
    call = ToolCall(id=call_id, name=tool.name, arguments=args)
    message = AssistantMessage(content=[call], stop_reason="toolUse")
    prepared = tool.prepare_arguments(args) if tool.prepare_arguments else args
    params = tool.parameters.model_validate(prepared)
    return BeforeToolCallContext(message, call, params, AgentContext(tools=[tool]), tool)


async def run_calls(
    ws: Path, calls: list[tuple[str, dict[str, Any]]], *, approve: str, **options: Any
) -> list[ToolResultMessage]:
    """One turn of `calls` (tool name, arguments) from a scripted model, through the real
    runtime in `ws`; the tool results, in order."""
    turns = [
        {
            "tool_calls": [
                {"id": f"c{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(calls)
            ]
        },
        {"text": "done"},
    ]
    scenario = Scenario.model_validate({"name": "calls", "turns": turns})
    options = {**options, "approve": approve}
    runtime = build_runtime(RunOptions(scenario=scenario, workspace=ws, record=False, **options))
    await runtime.agent.prompt("go")
    return [m for m in runtime.agent.state.messages if isinstance(m, ToolResultMessage)]
