"""The loop without tools: event sequence, context conversion, continue, the event
iterator, and JSON round trips (ported from pi's agent-loop.test.ts)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tests.agent.helpers import MODEL, FakeStream, Recorder, assistant, call, run_loop, user
from workbench.agent import (
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    Usage,
    UserMessage,
    agent_loop,
    agent_loop_continue,
    default_convert_to_llm,
    run_agent_loop_continue,
)
from workbench.agent.config import RunLlmFilter
from workbench.bus_events import parse_event


async def test_simple_prompt_emits_full_lifecycle_and_returns_new_messages() -> None:
    stream = FakeStream(assistant("Hi there!"))
    run = await run_loop(stream, prompt="Hello")

    assert [m.role for m in run.messages] == ["user", "assistant"]
    assert run.messages[1].text == "Hi there!"
    assert run.rec.types() == [
        "agent_start",
        "turn_start",
        "message_start",  # the prompt
        "message_end",
        "message_start",  # the assistant reply
        "message_end",
        "turn_end",
        "agent_end",
    ]
    end = run.rec.events[-1]
    assert [m.role for m in end.messages] == ["user", "assistant"]
    turn_end = run.rec.of("turn_end")[0]
    assert turn_end.message.text == "Hi there!" and turn_end.tool_results == []


async def test_message_updates_carry_the_provider_event() -> None:
    run = await run_loop(FakeStream(assistant("abc")))
    updates = run.rec.of("message_update")
    assert len(updates) == 1
    assert updates[0].assistant_message_event.type == "text_delta"
    assert updates[0].assistant_message_event.delta == "abc"


async def test_provider_receives_model_system_prompt_tools_and_signal() -> None:
    from tests.agent.helpers import make_tool
    from workbench.agent import AbortController

    tool = make_tool()
    controller = AbortController()
    stream = FakeStream(assistant("ok"))
    await run_loop(stream, [tool], signal=controller.signal)

    request = stream.requests[0]
    assert request.model == MODEL
    assert request.context.system_prompt == "sys"
    assert list(request.context.tools) == [tool]
    assert request.signal is controller.signal
    assert [m.role for m in request.context.messages] == ["user"]


async def test_convert_to_llm_filters_custom_messages_out_of_the_request() -> None:
    class Notification:  # an app-only message the model must not see
        role = "notification"
        text = "FYI"

    seen: list[Any] = []

    def convert(messages: list[Any]) -> list[Any]:
        out = [m for m in messages if getattr(m, "role", None) != "notification"]
        seen.append(out)
        return out

    stream = FakeStream(assistant("Response"))
    run = await run_loop(stream, history=[Notification()], convert_to_llm=convert)  # type: ignore[list-item]

    assert [m.role for m in seen[0]] == ["user"]
    assert [m.role for m in stream.requests[0].context.messages] == ["user"]
    assert run.messages[-1].text == "Response"


async def test_default_convert_to_llm_keeps_only_llm_roles() -> None:
    class Custom:
        role = "custom"

    kept = default_convert_to_llm([user("a"), Custom(), assistant("b")])  # type: ignore[list-item]
    assert [m.role for m in kept] == ["user", "assistant"]


def test_the_runs_filter_keeps_what_the_default_keeps_as_the_transcript_changes() -> None:
    class Custom:
        role = "custom"

    class LooksLikeAssistant(BaseModel):  # equal fields, but not a message a model reads
        role: str
        content: list[Any]
        stop_reason: str
        error_message: str | None
        usage: Any
        model: str
        provider: str
        timestamp: float

    class MyUser(UserMessage):  # kept: it is a user message
        pass

    llm_filter = RunLlmFilter()
    messages: list[Any] = [user("a"), assistant("b")]
    steps = [
        lambda m: m.append(user("c")),  # grew: only the new message is looked at
        lambda m: m.insert(1, Custom()),  # a custom message inside the known part
        lambda m: m.pop(1),
        lambda m: m.__setitem__(0, user("z")),  # an earlier message replaced
        lambda m: m.append(Custom()),  # a custom message at the end
        lambda m: m.pop(),
        lambda m: m.__setitem__(1, LooksLikeAssistant(**dict(m[1]))),
        lambda m: m.__setitem__(0, MyUser(**dict(m[0]))),
        lambda m: m.__setitem__(1, assistant("b")),
        lambda m: m.clear(),  # shrank
        lambda m: m.append(user("d")),
    ]
    for step in [lambda m: None, *steps]:
        step(messages)
        got = llm_filter(messages)
        assert got == default_convert_to_llm(messages)
        assert [type(m) for m in got] == [type(m) for m in default_convert_to_llm(messages)]
        assert got is not messages


async def test_transform_context_runs_before_convert_to_llm() -> None:
    order: list[str] = []
    transformed: list[Any] = []

    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        order.append("transform")
        transformed[:] = messages[-2:]
        return transformed

    def convert(messages: list[Any]) -> list[Any]:
        order.append("convert")
        assert messages is transformed
        return list(messages)

    history = [
        user("old 1"),
        assistant("old response 1"),
        user("old 2"),
        assistant("old response 2"),
    ]
    stream = FakeStream(assistant("Response"))
    run = await run_loop(
        stream,
        prompt="new message",
        history=history,
        transform_context=transform,
        convert_to_llm=convert,
    )

    assert order == ["transform", "convert"]
    sent = stream.requests[0].context.messages
    assert [(m.role, m.text if m.role == "assistant" else m.content) for m in sent] == [
        ("assistant", "old response 2"),
        ("user", "new message"),
    ]
    # the transform only shapes the request, never the transcript (nor the caller's context)
    assert [m.role for m in run.messages] == ["user", "assistant"]
    assert len(run.context.messages) == 4


async def test_continue_refuses_empty_context_and_trailing_assistant() -> None:
    config = AgentLoopConfig(model=MODEL)
    never = FakeStream(RuntimeError("must not be called"))

    with pytest.raises(ValueError, match="no messages"):
        agent_loop_continue(AgentContext(messages=[]), config, stream_fn=never)
    with pytest.raises(ValueError, match="assistant"):
        agent_loop_continue(
            AgentContext(messages=[user("a"), assistant("b")]), config, stream_fn=never
        )
    with pytest.raises(ValueError, match="no messages"):
        await run_agent_loop_continue(
            AgentContext(messages=[]), config, Recorder(), stream_fn=never
        )
    with pytest.raises(ValueError, match="assistant"):
        await run_agent_loop_continue(
            AgentContext(messages=[user("a"), assistant("b")]), config, Recorder(), stream_fn=never
        )
    assert never.count == 0


async def test_continue_emits_no_message_events_for_existing_context() -> None:
    context = AgentContext(system_prompt="sys", messages=[user("Hello")])
    stream = FakeStream(assistant("Response"))
    events = agent_loop_continue(context, AgentLoopConfig(model=MODEL), stream_fn=stream)
    collected = [e async for e in events]
    messages = await events.result()

    assert [m.role for m in messages] == ["assistant"]
    ends = [e for e in collected if e.type == "message_end"]
    assert [e.message.role for e in ends] == ["assistant"]
    assert collected[0].type == "agent_start" and collected[-1].type == "agent_end"
    # the caller's context is not mutated
    assert len(context.messages) == 1


async def test_continue_accepts_a_custom_last_message_that_convert_turns_into_user() -> None:
    class Custom:
        role = "custom"
        text = "Hook content"

    def convert(messages: list[Any]) -> list[Any]:
        return [
            UserMessage(content=m.text) if getattr(m, "role", "") == "custom" else m
            for m in messages
        ]

    stream = FakeStream(assistant("Response to custom message"))
    context = AgentContext(messages=[Custom()])  # type: ignore[list-item]
    events = agent_loop_continue(
        context, AgentLoopConfig(model=MODEL, convert_to_llm=convert), stream_fn=stream
    )
    messages = await events.result()

    assert [m.role for m in messages] == ["assistant"]
    assert stream.requests[0].context.messages[0].content == "Hook content"


async def test_agent_loop_iterator_yields_events_then_result() -> None:
    stream = FakeStream(assistant("Hi"))
    events = agent_loop(
        [user("Hello")], AgentContext(), AgentLoopConfig(model=MODEL), stream_fn=stream
    )
    types = [e.type async for e in events]
    messages = await events.result()
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert [m.role for m in messages] == ["user", "assistant"]


async def test_agent_loop_result_without_iterating() -> None:
    events = agent_loop(
        [user("Hello")], AgentContext(), AgentLoopConfig(model=MODEL), stream_fn=FakeStream()
    )
    messages = await events.result()
    assert [m.role for m in messages] == ["user", "assistant"]


async def test_agent_loop_consumer_may_stop_iterating_early() -> None:
    """Breaking out of the iterator must not break the run: result() still arrives."""
    from tests.agent.helpers import make_tool

    stream = FakeStream(assistant(call("t1", args={"value": "x"})), assistant("done"))
    events = agent_loop(
        [user("go")],
        AgentContext(tools=[make_tool()]),
        AgentLoopConfig(model=MODEL),
        stream_fn=stream,
    )
    async for event in events:
        if event.type == "turn_start":
            break
    messages = await events.result()
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_run_loop_requires_a_stream_fn() -> None:
    from workbench.agent import run_agent_loop

    with pytest.raises(TypeError, match="stream_fn"):
        await run_agent_loop([user("x")], AgentContext(), AgentLoopConfig(model=MODEL), Recorder())


async def test_sync_emit_sink_is_supported() -> None:
    seen: list[str] = []
    from workbench.agent import run_agent_loop

    await run_agent_loop(
        [user("x")],
        AgentContext(),
        AgentLoopConfig(model=MODEL),
        lambda e: seen.append(e.type),
        stream_fn=FakeStream(),
    )
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"


# -- JSON round trips ----------------------------------------------------------------


def _round_trip(message: Any) -> Any:
    data = message.model_dump(mode="json")
    return type(message).model_validate(data)


def test_messages_round_trip_through_json() -> None:
    messages = [
        UserMessage(content="plain"),
        UserMessage(
            content=[TextContent(text="look"), ImageContent(data="aGk=", mime_type="image/png")]
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm"),
                TextContent(text="calling"),
                call("c1", "edit", {"path": "a", "n": [1, 2]}, raw='{"path": "a", "n": [1, 2]}'),
            ],
            stop_reason="toolUse",
            usage=Usage(input=1, output=2, cache_read=3, cache_write=4, total_tokens=10),
            model="m",
            provider="p",
            error_message=None,
        ),
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="edit",
            content=[TextContent(text="ok")],
            details={"diff": "+x"},
            is_error=True,
        ),
    ]
    for message in messages:
        assert _round_trip(message) == message

    from pydantic import TypeAdapter

    from workbench.agent import Message

    adapter = TypeAdapter(list[Message])
    dumped = adapter.dump_python(messages, mode="json")
    assert adapter.validate_python(dumped) == messages
    assert [type(m) for m in adapter.validate_json(adapter.dump_json(messages))] == [
        type(m) for m in messages
    ]


async def test_every_event_of_a_run_round_trips_through_json() -> None:
    from tests.agent.helpers import make_tool
    from workbench.agent import AgentToolResult

    async def progress(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        on_update(AgentToolResult.text("half way", details={"pct": 50}))
        return AgentToolResult.text("done", details={"pct": 100})

    tools = [make_tool("work", progress)]
    stream = FakeStream(
        assistant(
            "thinking aloud",
            call("a", "work", {"value": "1"}),
            call("b", "missing", {}),
            call("c", "work", raw="{bad"),
        ),
        assistant("done"),
    )
    run = await run_loop(stream, tools)
    kinds = {e.type for e in run.rec.events}
    assert {
        "tool_execution_update",
        "tool_arguments",
        "message_update",
        "turn_end",
        "agent_end",
    } <= kinds
    for event in run.rec.events:
        data = event.model_dump(mode="json")
        back = parse_event(data)
        assert type(back) is type(event)
        assert back.model_dump(mode="json") == data
        assert parse_event(event.model_dump_json()).model_dump(mode="json") == data
