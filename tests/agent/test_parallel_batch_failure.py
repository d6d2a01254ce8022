"""A parallel batch whose loop breaks off mid-batch: the other calls stop, every call
still gets exactly one result, and the run ends with the failure (the batch's calls
run as tasks of their own; the first that raises ends the batch)."""

from __future__ import annotations

from typing import Any

import anyio

from tests.agent.helpers import (
    FakeStream,
    Recorder,
    assert_events_valid,
    assert_transcript_valid,
    assistant,
    call,
    make_tool,
    run_loop,
)
from workbench.agent import AbortSignal, AgentToolResult, AssistantMessage, ToolResultMessage


async def test_a_listener_failing_during_a_parallel_batch_ends_it_with_one_result_a_call() -> None:
    stopped: list[str] = []

    async def slow(tool_call_id: str, p: Any, signal: AbortSignal, on_update: Any) -> Any:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            stopped.append(tool_call_id)
            raise
        return AgentToolResult.text("too late")

    def fail_on_the_fast_end(event: Any) -> None:
        if event.type == "tool_execution_end" and event.tool_call_id == "fast":
            raise RuntimeError("boom")

    calls = assistant(
        call("slow-1", "slow", {"value": "a"}),
        call("fast", "echo", {"value": "b"}),
        call("slow-2", "slow", {"value": "c"}),
    )
    stream = FakeStream(calls, assistant("never asked"))
    rec = Recorder(on_event=fail_on_the_fast_end)
    run = await run_loop(stream, [make_tool(), make_tool("slow", slow)], rec=rec)

    assert sorted(stopped) == ["slow-1", "slow-2"]  # the others were cancelled, not awaited
    assert stream.count == 1
    assert_transcript_valid(run.messages)
    assert_events_valid(rec.events)
    results = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["slow-1", "fast", "slow-2"]
    assert all(r.is_error for r in results if r.tool_call_id != "fast")
    last = run.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert last.error_message == "Agent loop failed: RuntimeError: boom"
    assert rec.events[-1].type == "agent_end"
