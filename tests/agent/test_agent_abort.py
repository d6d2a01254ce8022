"""Agent runs that are busy or aborted: second prompts, abort(), abort_tool_call()
(ported from pi's agent.test.ts plus the workbench contract)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from tests.agent.helpers import (
    MODEL,
    FakeStream,
    Gate,
    Recorder,
    assert_events_valid,
    assert_transcript_valid,
    assistant,
    call,
    make_tool,
    text_of,
)

from workbench.agent import (
    AbortError,
    Agent,
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
    ToolResultMessage,
)
from workbench.providers.scripted import Scenario, ScriptedProvider, ScriptedToolCall, ScriptedTurn


async def until_aborted(
    model: Model, context: LlmContext, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))
    assert options.signal is not None
    await options.signal.wait()
    yield AssistantMessageEvent(
        type="error",
        message=AssistantMessage(
            model=model.id, stop_reason="aborted", error_message="Request was aborted"
        ),
    )


def test_abort_when_idle_is_a_no_op() -> None:
    agent = Agent(stream_fn=FakeStream(), model=MODEL)
    agent.abort()
    agent.abort("with a reason")
    assert agent.abort_tool_call("nothing") is False


async def test_a_second_prompt_while_running_raises_a_clear_error() -> None:
    agent = Agent(stream_fn=until_aborted, model=MODEL)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "First message")
        await anyio.sleep(0.01)
        assert agent.state.is_streaming
        with pytest.raises(RuntimeError) as info:
            await agent.prompt("Second message")
        message = str(info.value)
        assert "already running" in message and "steer()" in message and "follow_up()" in message
        agent.abort()
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert [text_of(m) for m in agent.state.messages if m.role == "user"] == ["First message"]
    assert not agent.state.is_streaming and agent.signal is None


async def test_abort_during_streaming_records_an_aborted_message() -> None:
    agent = Agent(stream_fn=until_aborted, model=MODEL)
    rec = Recorder()
    agent.subscribe(rec.listener)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hello")
        await anyio.sleep(0.01)
        agent.abort()
        await agent.wait_for_idle()
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert agent.state.error_message == "Request was aborted"
    assert rec.types()[-1] == "agent_end"


async def test_abort_settles_even_when_the_stream_ignores_the_signal() -> None:
    started = Gate()

    async def deaf(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))
        started.open()
        await anyio.sleep(60)
        yield AssistantMessageEvent(type="done", message=assistant("never"))

    agent = Agent(stream_fn=deaf, model=MODEL, tool_abort_grace=0.05)
    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "hello")
            await started.wait()
            agent.abort()
            await agent.wait_for_idle()
    assert not agent.state.is_streaming
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_abort_settles_even_when_a_tool_ignores_the_signal() -> None:
    started = Gate()

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        started.open()
        await anyio.sleep(60)
        return AgentToolResult.text("never")

    stream = FakeStream(default=assistant(call("hang-1", "hang", {"value": "v"})))
    agent = Agent(
        stream_fn=stream,
        model=MODEL,
        tools=[make_tool("hang", hang)],
        tool_execution="sequential",
        tool_abort_grace=0.05,
    )
    rec = Recorder()
    agent.subscribe(rec.listener)
    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "go")
            await started.wait()
            assert agent.state.pending_tool_calls == {"hang-1"}
            agent.abort()
            await agent.wait_for_idle()
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error and "did not stop" in text_of(result)
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert agent.state.pending_tool_calls == set()
    assert_transcript_valid(agent.state.messages)
    assert_events_valid(rec.events)


async def test_abort_tool_call_ends_one_call_and_the_run_goes_on() -> None:
    both_running = Gate()
    running: set[str] = set()

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        running.add(tool_call_id)
        if len(running) == 2:
            both_running.open()
        if tool_call_id == "long":
            await signal.wait()
            raise AbortError(signal.reason)
        await both_running.wait()
        await anyio.sleep(0.02)
        return AgentToolResult.text("short finished")

    stream = FakeStream(
        assistant(call("long", args={"value": "1"}), call("short", args={"value": "2"})),
        assistant("next turn"),
    )
    agent = Agent(stream_fn=stream, model=MODEL, tools=[make_tool(execute=execute)])
    rec = Recorder()
    agent.subscribe(rec.listener)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await both_running.wait()
        assert agent.abort_tool_call("long") is True
        assert agent.abort_tool_call("no-such-call") is False
    long_result, short_result = [
        m for m in agent.state.messages if isinstance(m, ToolResultMessage)
    ]
    assert long_result.is_error and "Tool call aborted by user" in text_of(long_result)
    assert not short_result.is_error and text_of(short_result) == "short finished"
    assert agent.state.messages[-1].text == "next turn" and stream.count == 2
    assert rec.ids("tool_execution_end") == ["long", "short"]
    assert agent.abort_tool_call("long") is False  # finished calls cannot be aborted


async def test_abort_tool_call_with_a_reason() -> None:
    started = Gate()

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        started.open()
        await signal.wait()
        signal.throw_if_aborted()
        return AgentToolResult.text("unreachable")

    agent = Agent(
        stream_fn=FakeStream(assistant(call("t", args={"value": "v"}))),
        model=MODEL,
        tools=[make_tool(execute=execute)],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await started.wait()
        agent.abort_tool_call("t", "too slow")
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert "too slow" in text_of(result)


async def test_abort_while_streaming_tool_calls_with_the_scripted_provider_then_continue() -> None:
    """Aborted mid-reply: the partial calls are answered, and continue_() retries the turn."""
    turns = [
        ScriptedTurn(
            text="Reading both.",
            tool_calls=[ScriptedToolCall(name="echo", arguments={"value": "a" * 60})],
        ),
        ScriptedTurn(text="All done."),
    ]
    provider = ScriptedProvider(
        Scenario(name="s", turns=turns), chars_per_second=3000, chunk_size=3
    )
    log: list[str] = []
    agent = Agent(stream_fn=provider, model=provider.model, tools=[make_tool(log=log)])

    def listener(event: Any, signal: Any) -> None:
        if (
            event.type == "message_update"
            and event.assistant_message_event.type == "toolcall_delta"
        ):
            agent.abort()

    unsubscribe = agent.subscribe(listener)
    await agent.prompt("go")
    assert log == []
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "toolResult"]
    assert agent.state.messages[1].stop_reason == "aborted"
    assert_transcript_valid(agent.state.messages)

    unsubscribe()
    provider.chars_per_second = float("inf")
    await agent.continue_()  # the aborted turn is played again, now to the end
    assert log == ["a" * 60]
    assert agent.state.messages[-1].text == "All done."
    assert_transcript_valid(agent.state.messages)


async def test_run_abort_reason_reaches_the_tool_signal() -> None:
    reasons: list[Any] = []
    started = Gate()

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        started.open()
        await signal.wait()
        reasons.append(signal.reason)
        return AgentToolResult.text("stopped")

    agent = Agent(
        stream_fn=FakeStream(assistant(call("t", args={"value": "v"}))),
        model=MODEL,
        tools=[make_tool(execute=execute)],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await started.wait()
        agent.abort("shutting down")
    assert reasons == ["shutting down"]
