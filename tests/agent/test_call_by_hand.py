"""Agent.call_tool: one call by hand, through the same pipeline, hooks and events as a
model's call, and never in the transcript the model sees."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.agent.helpers import MODEL, FakeStream, Recorder, assistant, make_tool, user
from workbench.agent import (
    AfterToolCallResult,
    Agent,
    AgentToolResult,
    BeforeToolCallResult,
    ToolResultMessage,
)
from workbench.agent.by_hand import is_by_hand


def make_agent(*tools: Any, stream: Any = None, **kwargs: Any) -> tuple[Agent, Recorder]:
    agent = Agent(stream_fn=stream or FakeStream(), model=MODEL, tools=list(tools), **kwargs)
    rec = Recorder()
    agent.subscribe(rec.listener)
    return agent, rec


async def test_a_call_by_hand_runs_every_stage_and_emits_the_tool_events() -> None:
    log: list[Any] = []
    seen: list[str] = []

    def before(ctx: Any, _signal: Any) -> None:
        seen.append(f"before {ctx.tool_call.id} {ctx.args.value}")

    def after(ctx: Any, _signal: Any) -> AfterToolCallResult:
        seen.append(f"after {ctx.result.content[0].text}")
        return AfterToolCallResult(details={"after": True})

    agent, rec = make_agent(
        make_tool(log=log, prepare=lambda a: {"value": a.get("v", a.get("value"))}),
        before_tool_call=before,
        after_tool_call=after,
    )
    result = await agent.call_tool("echo", '{"v": "hi"}')
    assert log == ["hi"]
    assert seen == ["before hand_1 hi", "after echoed: hi"]
    assert isinstance(result, ToolResultMessage) and result.tool_call_id == "hand_1"
    assert result.details == {"after": True} and not result.is_error
    assert rec.types() == [
        "hand_call",
        "tool_execution_start",
        "tool_arguments",
        "tool_execution_end",
        "hand_call_end",
    ]
    container = rec.of("hand_call")[0].message
    assert is_by_hand(container) and container.provider == "you" and container.model == "by hand"
    arguments = rec.of("tool_arguments")[0]
    assert arguments.parsed == {"v": "hi"} and arguments.prepared == {"value": "hi"}
    assert rec.of("hand_call_end")[0].message == result
    assert agent.state.is_streaming is False and agent.signal is None
    # the next one has its own id
    assert (await agent.call_tool("echo", {"value": "again"})).tool_call_id == "hand_2"


async def test_the_call_by_hand_is_not_in_the_transcript_nor_the_next_request() -> None:
    stream = FakeStream(assistant("first"), assistant("second"))
    agent, rec = make_agent(make_tool(), stream=stream)
    await agent.prompt("hello")
    before = list(agent.state.messages)
    await agent.call_tool("echo", {"value": "secret-by-hand"})
    assert agent.state.messages == before
    assert not [
        e
        for e in rec.events
        if e.type in ("message_start", "message_end")
        and getattr(e.message, "tool_call_id", "").startswith("hand_")
    ]
    await agent.prompt("next")
    sent = stream.requests[-1].context.messages
    assert "secret-by-hand" not in repr(sent) and "hand_1" not in repr(sent)
    assert [m.role for m in sent] == ["user", "assistant", "user"]


async def test_invalid_arguments_and_unknown_tools_are_the_calls_error_results() -> None:
    log: list[Any] = []
    agent, rec = make_agent(make_tool(log=log))
    bad_json = await agent.call_tool("echo", '{"value": ')
    assert bad_json.is_error and "Invalid JSON" in bad_json.content[0].text
    invalid = await agent.call_tool("echo", {"value": 3})
    assert invalid.is_error and "value" in invalid.content[0].text
    unknown = await agent.call_tool("nope", {})
    assert unknown.is_error and "nope" in unknown.content[0].text
    assert log == []
    stages = [e.error is not None for e in rec.of("tool_arguments")]
    assert stages == [True, True, True]
    assert agent.state.messages == []


async def test_the_gate_can_block_a_call_by_hand() -> None:
    log: list[Any] = []

    def deny(ctx: Any, _signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="Denied by the rules")

    agent, _ = make_agent(make_tool(log=log), before_tool_call=deny)
    result = await agent.call_tool("echo", {"value": "x"})
    assert result.is_error and result.content[0].text == "Denied by the rules" and log == []


async def test_abort_ends_a_running_call_by_hand_and_updates_flow() -> None:
    async def slow(call_id: str, p: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult.text("working"))
        await signal.wait()
        raise RuntimeError("stopped")

    agent, rec = make_agent(make_tool("slow", slow))

    async def abort_when_running(event: Any, _signal: Any) -> None:
        if event.type == "tool_execution_update":
            agent.abort("Cancelled by the user (ctrl+c)")

    agent.subscribe(abort_when_running)
    with anyio.fail_after(5):
        result = await agent.call_tool("slow", {"value": "x"})
    assert result.is_error
    assert rec.of("tool_execution_update")
    assert agent.state.is_streaming is False


async def test_one_call_can_be_cancelled_by_its_id() -> None:
    async def slow(call_id: str, p: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await signal.wait()
        raise RuntimeError("stopped")

    agent, _ = make_agent(make_tool("slow", slow))

    def cancel(event: Any, _signal: Any) -> None:
        if event.type == "tool_execution_phase" and event.phase == "executing":
            assert agent.abort_tool_call(event.tool_call_id, "F8")

    agent.subscribe(cancel)
    with anyio.fail_after(5):
        result = await agent.call_tool("slow", {"value": "x"})
    assert result.is_error


async def test_a_call_by_hand_is_refused_while_a_run_is_going() -> None:
    release = anyio.Event()

    async def reply(context: Any, index: int) -> Any:
        await release.wait()
        return assistant("ok")

    agent, _ = make_agent(make_tool(), stream=FakeStream(reply))
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(RuntimeError, match="call_tool"):
            await agent.call_tool("echo", {"value": "x"})
        release.set()
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert user("go").content == agent.state.messages[0].content


async def test_a_hand_id_a_model_already_used_is_skipped() -> None:
    from tests.agent.helpers import call, calls_reply

    stream = FakeStream(calls_reply(call("hand_1", "echo", {"value": "m"})), assistant("ok"))
    agent, _ = make_agent(make_tool(), stream=stream)
    await agent.prompt("go")
    assert (await agent.call_tool("echo", {"value": "x"})).tool_call_id == "hand_2"
