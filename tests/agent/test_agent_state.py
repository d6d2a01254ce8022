"""The stateful Agent: state, the event bus, prompts, errors, reset
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
    assistant,
    call,
    make_tool,
    text_of,
    user,
)

from workbench.agent import (
    AbortSignal,
    Agent,
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    ToolResultMessage,
    UserMessage,
)


def make_agent(stream: Any = None, **kwargs: Any) -> Agent:
    return Agent(stream_fn=stream or FakeStream(), model=MODEL, **kwargs)


async def until_aborted(
    model: Model, context: LlmContext, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    """A provider that streams nothing until the run is aborted, then ends "aborted"."""
    yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))
    assert options.signal is not None
    await options.signal.wait()
    yield AssistantMessageEvent(
        type="error",
        message=AssistantMessage(
            model=model.id, stop_reason="aborted", error_message="Request was aborted"
        ),
    )


def test_default_state() -> None:
    agent = make_agent()
    state = agent.state
    assert state.system_prompt == "" and state.model == MODEL
    assert state.tools == [] and state.messages == []
    assert state.is_streaming is False and state.streaming_message is None
    assert state.pending_tool_calls == set() and state.error_message is None
    assert agent.signal is None


def test_custom_initial_state_is_copied() -> None:
    tool = make_tool()
    history = [user("earlier"), assistant("reply")]
    agent = make_agent(system_prompt="You are helpful.", tools=[tool], messages=history)
    assert agent.state.system_prompt == "You are helpful."
    assert agent.state.tools == [tool] and agent.state.messages == history
    assert agent.state.messages is not history


def test_subscribe_emits_nothing_and_unsubscribe_stops_delivery() -> None:
    agent = make_agent()
    seen: list[Any] = []
    unsubscribe = agent.subscribe(lambda event, signal: seen.append(event))
    agent.state.system_prompt = "changed"  # state edits are not events
    assert seen == []
    unsubscribe()
    unsubscribe()  # idempotent


async def test_unsubscribed_listener_gets_no_events() -> None:
    agent = make_agent()
    kept, dropped = Recorder(), Recorder()
    agent.subscribe(kept.listener)
    unsubscribe = agent.subscribe(dropped.listener)
    unsubscribe()
    await agent.prompt("hi")
    assert kept.types()[0] == "agent_start" and dropped.events == []


async def test_prompt_runs_the_loop_and_records_the_transcript() -> None:
    stream = FakeStream(assistant(call("t", args={"value": "v"})), assistant("all done"))
    agent = make_agent(stream, tools=[make_tool()], system_prompt="be brief")
    rec = Recorder()
    agent.subscribe(rec.listener)
    added = await agent.prompt("do it")

    assert [m.role for m in added] == ["user", "assistant", "toolResult", "assistant"]
    assert agent.state.messages == added
    assert stream.requests[0].context.system_prompt == "be brief"
    assert rec.types()[0] == "agent_start" and rec.types()[-1] == "agent_end"
    assert agent.state.is_streaming is False and agent.signal is None


async def test_prompt_accepts_a_message_or_a_list_of_messages() -> None:
    stream = FakeStream()
    agent = make_agent(stream)
    message = UserMessage(content=[TextContent(text="structured")])
    await agent.prompt(message)
    await agent.prompt([user("first"), user("second")])
    users = [text_of(m) for m in agent.state.messages if m.role == "user"]
    assert users == ["structured", "first", "second"]
    assert [text_of(m) for m in stream.requests[1].context.messages][-2:] == ["first", "second"]


async def test_the_transcript_carries_over_between_prompts() -> None:
    stream = FakeStream(assistant("one"), assistant("two"))
    agent = make_agent(stream)
    await agent.prompt("a")
    await agent.prompt("b")
    assert [m.role for m in stream.requests[1].context.messages] == ["user", "assistant", "user"]
    assert [text_of(m) for m in agent.state.messages] == ["a", "one", "b", "two"]


async def test_state_while_running_and_after() -> None:
    release = Gate()
    snapshots: list[tuple[str, bool, set[str], bool]] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        await release.wait()
        return AgentToolResult.text("ok")

    stream = FakeStream(
        assistant("thinking out loud", call("t1", args={"value": "v"})), assistant("done")
    )
    agent = make_agent(stream, tools=[make_tool(execute=execute)])

    def listener(event: Any, signal: Any) -> None:
        state = agent.state
        snapshots.append(
            (
                event.type,
                state.is_streaming,
                set(state.pending_tool_calls),
                state.streaming_message is not None,
            )
        )
        if event.type == "tool_execution_start":
            release.open()

    agent.subscribe(listener)
    await agent.prompt("go")
    by_type = {}
    for kind, streaming, pending, has_partial in snapshots:
        by_type.setdefault(kind, []).append((streaming, pending, has_partial))
    assert all(s for s, _, _ in sum(by_type.values(), []))
    assert by_type["tool_execution_start"][0][1] == {"t1"}
    assert by_type["tool_execution_end"][0][1] == set()
    assert by_type["message_update"][0][2] is True  # streaming_message set while streaming
    assert agent.state.is_streaming is False
    assert agent.state.streaming_message is None and agent.state.pending_tool_calls == set()


async def test_error_message_is_recorded_and_cleared_by_the_next_run() -> None:
    stream = FakeStream(RuntimeError("provider exploded"), assistant("fine now"))
    agent = make_agent(stream)
    rec = Recorder()
    agent.subscribe(rec.listener)
    await agent.prompt("hello")
    assert "provider exploded" in (agent.state.error_message or "")
    assert rec.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    await agent.prompt("again")
    assert agent.state.error_message is None


async def test_listeners_are_awaited_in_order_with_the_event_and_signal() -> None:
    log: list[str] = []
    agent = make_agent(FakeStream(assistant("hi")))

    async def slow_first(event: Any, signal: AbortSignal | None) -> None:
        log.append(f"1-start:{event.type}")
        await anyio.sleep(0)
        log.append(f"1-end:{event.type}")

    def second(event: Any, signal: AbortSignal | None) -> None:
        assert signal is agent.signal and signal is not None
        log.append(f"2:{event.type}")

    agent.subscribe(slow_first)
    agent.subscribe(second)
    await agent.prompt("x")
    assert log[:3] == ["1-start:agent_start", "1-end:agent_start", "2:agent_start"]
    assert len(log) == 3 * len([e for e in log if e.startswith("2:")])


async def test_prompt_waits_for_async_listeners() -> None:
    barrier = Gate()
    finished: list[bool] = []
    agent = make_agent(FakeStream(assistant("ok")))

    async def listener(event: Any, signal: Any) -> None:
        if event.type == "agent_end":
            await barrier.wait()
            finished.append(True)

    agent.subscribe(listener)
    done: list[bool] = []

    async def prompt() -> None:
        await agent.prompt("hello")
        done.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(prompt)
        await anyio.sleep(0.02)
        assert done == [] and finished == [] and agent.state.is_streaming
        barrier.open()
    assert done == [True] and finished == [True] and not agent.state.is_streaming


async def test_wait_for_idle_waits_for_async_listeners() -> None:
    barrier = Gate()
    agent = make_agent(FakeStream(assistant("ok")))

    async def listener(event: Any, signal: Any) -> None:
        if event.type == "message_end" and event.message.role == "assistant":
            await barrier.wait()

    agent.subscribe(listener)
    idle: list[bool] = []

    async def waiter() -> None:
        await agent.wait_for_idle()
        idle.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hello")
        await anyio.sleep(0.01)
        tg.start_soon(waiter)
        await anyio.sleep(0.01)
        assert idle == [] and agent.state.is_streaming
        barrier.open()
    assert idle == [True] and not agent.state.is_streaming


async def test_wait_for_idle_returns_at_once_when_idle() -> None:
    with anyio.fail_after(1):
        await make_agent().wait_for_idle()


async def test_listeners_receive_the_active_run_signal() -> None:
    received: list[AbortSignal | None] = []
    agent = make_agent(until_aborted)

    def listener(event: Any, signal: AbortSignal | None) -> None:
        if event.type == "agent_start":
            received.append(signal)

    agent.subscribe(listener)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hello")
        await anyio.sleep(0.01)
        assert received and received[0] is not None and not received[0].aborted
        agent.abort()
    assert received[0].aborted


async def test_a_failing_listener_is_logged_and_does_not_break_the_run() -> None:
    agent = make_agent(FakeStream(assistant("fine")))
    later = Recorder()

    def broken(event: Any, signal: Any) -> None:
        raise ValueError("view crashed")

    agent.subscribe(broken)
    agent.subscribe(later.listener)
    added = await agent.prompt("x")
    assert added[-1].text == "fine"
    assert later.types()[-1] == "agent_end"
    assert agent.bus.listener_errors and isinstance(agent.bus.listener_errors[0], ValueError)


async def test_publish_puts_extra_events_on_the_bus() -> None:
    from workbench.bus_events import StepModeEvent

    agent = make_agent()
    rec = Recorder()
    agent.subscribe(rec.listener)
    await agent.publish(StepModeEvent(enabled=True))
    assert rec.types() == ["step_mode"] and rec.signals == [None]


async def test_reset_forgets_transcript_queues_and_error() -> None:
    agent = make_agent(FakeStream(RuntimeError("boom")))
    await agent.prompt("x")
    agent.steer("queued steer")
    agent.follow_up("queued follow-up")
    assert agent.state.error_message
    agent.reset()
    assert agent.state.messages == [] and agent.state.error_message is None
    assert agent.queued == ([], [])
    assert agent.state.is_streaming is False and agent.state.pending_tool_calls == set()


async def test_state_edits_between_runs_are_used_by_the_next_run() -> None:
    stream = FakeStream(assistant("a"), assistant("b"))
    agent = make_agent(stream)
    await agent.prompt("one")
    other = Model(id="other", provider="test")
    agent.state.model = other
    agent.state.system_prompt = "new prompt"
    agent.state.tools = [make_tool("fresh")]
    agent.state.messages = [user("rewritten history")]
    await agent.prompt("two")
    request = stream.requests[1]
    assert request.model == other and request.context.system_prompt == "new prompt"
    assert [t.name for t in request.context.tools] == ["fresh"]
    assert [text_of(m) for m in request.context.messages] == ["rewritten history", "two"]


async def test_agent_forwards_its_loop_options() -> None:
    calls: list[str] = []
    stream = FakeStream(assistant(call("t", args={"value": "v"})), assistant("done"))
    agent = make_agent(
        stream,
        tools=[make_tool()],
        before_tool_call=lambda ctx, s: calls.append("before"),
        after_tool_call=lambda ctx, s: calls.append("after"),
        transform_context=lambda msgs, s: calls.append("transform") or msgs,
        convert_to_llm=lambda msgs: calls.append("convert") or list(msgs),
        should_stop_after_turn=lambda turn: calls.append("stop?") and False,
        prepare_next_turn=lambda turn: calls.append("prepare"),
        tool_execution="sequential",
    )
    await agent.prompt("go")
    assert calls == [
        "transform",
        "convert",
        "before",
        "after",
        "stop?",
        "prepare",
        "transform",
        "convert",
        "stop?",
    ]


async def test_tool_results_reach_the_transcript_in_assistant_order() -> None:
    release = Gate()

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        if params.value == "slow":
            await release.wait()
        else:
            release.open()
        return AgentToolResult.text(params.value)

    stream = FakeStream(
        assistant(call("a", args={"value": "slow"}), call("b", args={"value": "fast"})),
        assistant("done"),
    )
    agent = make_agent(stream, tools=[make_tool(execute=execute)])
    await agent.prompt("go")
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["a", "b"]


@pytest.mark.parametrize("bad", [None, 42])
async def test_prompt_rejects_what_is_not_a_message(bad: Any) -> None:
    agent = make_agent()
    rec = Recorder()
    agent.subscribe(rec.listener)
    with pytest.raises(Exception):  # noqa: B017 - pydantic refuses it
        await agent.prompt(bad)
    assert rec.events == []  # refused before the run started
    assert agent.state.is_streaming is False and agent.signal is None
    await agent.prompt("a real prompt")  # and the agent is usable
    assert rec.types()[-1] == "agent_end"
