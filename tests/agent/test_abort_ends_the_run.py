"""An aborted run asks the model nothing more: a `stream_fn` that ignores the abort
signal does not get a new turn, and the run ends as aborted, never finished."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from tests.agent.helpers import MODEL, assistant, call
from workbench.agent import (
    Agent,
    AgentTool,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
)
from workbench.agent.tool import tool


def deaf_stream(calls: list[int]) -> Any:
    """A stream_fn that never looks at its signal: a tool call first, then text."""

    async def stream(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        calls.append(1)
        reply = (
            assistant(call("c1", "stop_the_run", {}), stop_reason="toolUse")
            if len(calls) == 1
            else assistant("a whole new turn")
        )
        yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))
        yield AssistantMessageEvent(type="done", message=reply)

    return stream


async def test_an_abort_during_the_tools_sends_no_new_request_and_ends_aborted() -> None:
    calls: list[int] = []
    agent = Agent(stream_fn=deaf_stream(calls), model=MODEL)

    @tool
    async def stop_the_run() -> str:
        """Stands for ctrl+c pressed while the tool runs (or in its dialog)."""
        agent.abort("Cancelled by the user (ctrl+c)")
        return "ran"

    assert isinstance(stop_the_run, AgentTool)
    agent.state.tools = [stop_the_run]
    await agent.prompt("go")
    assert len(calls) == 1  # no second request: the stream_fn would have ignored the abort
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert "a whole new turn" not in str(agent.state.messages)
