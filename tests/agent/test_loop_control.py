"""Loop control: steering, follow-ups, should_stop_after_turn, prepare_next_turn,
provider failures, and aborts (of the run and of single calls)."""

from __future__ import annotations

import time
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
    run_loop,
    text_of,
    user,
)

from workbench.agent import (
    AbortController,
    AbortError,
    AgentContext,
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    NextTurn,
    StreamOptions,
    ToolCallAborts,
    ToolResultMessage,
    TurnContext,
)
from workbench.providers.scripted import Scenario, ScriptedProvider, ScriptedToolCall, ScriptedTurn

# -- steering and follow-ups ---------------------------------------------------------


async def test_steering_is_injected_after_the_whole_batch() -> None:
    log: list[str] = []
    delivered = False

    async def steering() -> list[Any]:
        nonlocal delivered
        if log and not delivered:  # the user typed while the first tool ran
            delivered = True
            return [user("interrupt")]
        return []

    two = assistant(
        call("tool-1", args={"value": "first"}), call("tool-2", args={"value": "second"})
    )
    stream = FakeStream(two, assistant("done"))
    run = await run_loop(
        stream, [make_tool(log=log)], tool_execution="sequential", get_steering_messages=steering
    )

    assert log == ["first", "second"]
    assert [e.is_error for e in run.rec.of("tool_execution_end")] == [False, False]
    sequence = [
        f"tool:{e.message.tool_call_id}" if e.message.role == "toolResult" else text_of(e.message)
        for e in run.rec.of("message_start")
        if e.message.role in ("toolResult", "user")
    ]
    assert sequence == ["go", "tool:tool-1", "tool:tool-2", "interrupt"]
    assert "interrupt" in [
        text_of(m) for m in stream.requests[1].context.messages if m.role == "user"
    ]
    assert [m.role for m in run.messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "user",
        "assistant",
    ]


async def test_steering_queued_before_the_run_is_delivered_with_the_first_request() -> None:
    queue = [user("also this")]

    async def steering() -> list[Any]:
        out, queue[:] = list(queue), []
        return out

    stream = FakeStream(assistant("ok"))
    run = await run_loop(stream, get_steering_messages=steering)
    assert [text_of(m) for m in stream.requests[0].context.messages] == ["go", "also this"]
    assert [m.role for m in run.messages] == ["user", "user", "assistant"]


async def test_steering_after_a_text_reply_starts_another_turn() -> None:
    polls = 0

    def steering() -> list[Any]:
        nonlocal polls
        polls += 1
        return [user("one more thing")] if polls == 2 else []

    stream = FakeStream(assistant("first answer"), assistant("second answer"))
    run = await run_loop(stream, get_steering_messages=steering)
    assert stream.count == 2
    assert [text_of(m) for m in run.messages] == [
        "go",
        "first answer",
        "one more thing",
        "second answer",
    ]
    assert run.rec.types().count("turn_start") == 2


async def test_follow_ups_are_polled_only_when_the_agent_would_stop() -> None:
    polls: list[int] = []
    served = False

    def follow_ups() -> list[Any]:
        nonlocal served
        polls.append(stream.count)
        if not served:
            served = True
            return [user("and then?")]
        return []

    stream = FakeStream(
        assistant(call("t1", args={"value": "a"})),
        assistant(call("t2", args={"value": "b"})),
        assistant("first stop"),
        assistant("second stop"),
    )
    run = await run_loop(stream, [make_tool()], get_follow_up_messages=follow_ups)
    assert polls == [3, 4]  # after the first text-only reply, then after the second
    assert [m.role for m in run.messages][-3:] == ["assistant", "user", "assistant"]
    assert text_of(run.messages[-2]) == "and then?"
    assert run.rec.events[-1].type == "agent_end"


async def test_steering_wins_over_follow_ups() -> None:
    log: list[str] = []
    steering_queue = [user("steer")]
    follow_queue = [user("follow")]

    def take(queue: list[Any]) -> Any:
        def hook() -> list[Any]:
            out, queue[:] = list(queue), []
            log.extend(text_of(m) for m in out)
            return out

        return hook

    stream = FakeStream(assistant(call("t", args={"value": "v"})), assistant("a"), assistant("b"))
    steering_queue.clear()

    def tool_execute_steers(*_: Any) -> Any:
        async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            steering_queue.append(user("steer"))
            return "ok"

        return execute

    run = await run_loop(
        stream,
        [make_tool(execute=tool_execute_steers())],
        get_steering_messages=take(steering_queue),
        get_follow_up_messages=take(follow_queue),
    )
    assert log == ["steer", "follow"]
    assert [text_of(m) for m in run.messages if m.role == "user"] == ["go", "steer", "follow"]


# -- should_stop_after_turn / prepare_next_turn ----------------------------------------


async def test_should_stop_after_turn_ends_the_run_without_polling_queues() -> None:
    log: list[str] = []
    steering_polls = 0
    follow_polls = 0
    seen: list[tuple[list[str], list[str], str]] = []

    async def steering() -> list[Any]:
        nonlocal steering_polls
        steering_polls += 1
        return []

    async def follow_ups() -> list[Any]:
        nonlocal follow_polls
        follow_polls += 1
        return [user("follow up should stay queued")]

    async def should_stop(turn: TurnContext) -> bool:
        seen.append(
            (
                [r.tool_call_id for r in turn.tool_results],
                [m.role for m in turn.context.messages],
                turn.message.role,
            )
        )
        return True

    stream = FakeStream(
        assistant(call("tool-1", args={"value": "hello"})), default=assistant("should not run")
    )
    run = await run_loop(
        stream,
        [make_tool(log=log)],
        get_steering_messages=steering,
        get_follow_up_messages=follow_ups,
        should_stop_after_turn=should_stop,
    )
    assert stream.count == 1 and log == ["hello"]
    assert steering_polls == 1 and follow_polls == 0
    assert seen == [(["tool-1"], ["user", "assistant", "toolResult"], "assistant")]
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult"]
    assert run.rec.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end",
        "tool_execution_start", "tool_arguments", "tool_execution_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip


async def test_should_stop_after_turn_false_keeps_going() -> None:
    calls: list[int] = []
    stream = FakeStream(assistant(call("t", args={"value": "v"})), assistant("done"))
    await run_loop(
        stream, [make_tool()], should_stop_after_turn=lambda turn: calls.append(1) and False
    )
    assert stream.count == 2 and len(calls) == 2


async def test_prepare_next_turn_replaces_the_context_before_the_next_request() -> None:
    prepare_calls = 0
    prepared = False

    async def prepare(turn: TurnContext) -> NextTurn | None:
        nonlocal prepare_calls, prepared
        prepare_calls += 1
        if prepared:
            return None
        prepared = True
        return NextTurn(
            context=AgentContext("second prompt", list(turn.context.messages), turn.context.tools)
        )

    stream = FakeStream(assistant(call("tool-1", args={"value": "hello"})), assistant("done"))
    run = await run_loop(stream, [make_tool()], prepare_next_turn=prepare)
    assert stream.count == 2 and prepare_calls == 1
    assert [r.context.system_prompt for r in stream.requests] == ["sys", "second prompt"]
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_prepare_next_turn_can_swap_the_model() -> None:
    bigger = Model(id="bigger", provider="test")
    stream = FakeStream(
        assistant(call("a", args={"value": "1"})),
        assistant(call("b", args={"value": "2"})),
        assistant("done"),
    )
    await run_loop(stream, [make_tool()], prepare_next_turn=lambda turn: NextTurn(model=bigger))
    assert [r.model.id for r in stream.requests] == ["mock", "bigger", "bigger"]


async def test_prepare_next_turn_sees_the_finished_turn() -> None:
    seen: list[Any] = []

    def prepare(turn: TurnContext) -> None:
        seen.append(
            (
                turn.message.tool_calls[0].id,
                [r.tool_call_id for r in turn.tool_results],
                len(turn.new_messages),
            )
        )

    stream = FakeStream(assistant(call("a", args={"value": "1"})), assistant("done"))
    await run_loop(stream, [make_tool()], prepare_next_turn=prepare)
    assert seen == [("a", ["a"], 3)]


# -- provider failures ---------------------------------------------------------------


async def test_provider_raising_before_any_event_ends_the_run_with_an_error_message() -> None:
    stream = FakeStream(RuntimeError("provider exploded"))
    run = await run_loop(stream)
    final = run.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "error" and "provider exploded" in (final.error_message or "")
    assert final.model == "mock" and final.provider == "test"
    assert run.rec.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip


async def test_stream_fn_raising_synchronously_is_a_provider_error() -> None:
    def broken(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        raise ConnectionError("no route to host")

    run = await run_loop(broken)  # type: ignore[arg-type]
    assert run.messages[-1].stop_reason == "error"
    assert "no route to host" in run.messages[-1].error_message
    assert_events_valid(run.rec.events)


async def test_provider_raising_mid_stream_keeps_the_partial_content() -> None:
    async def stream(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        partial = AssistantMessage(model=model.id, provider=model.provider)
        yield AssistantMessageEvent(type="start", partial=partial)
        grown = AssistantMessage(content=[{"type": "text", "text": "half an ans"}], model=model.id)  # type: ignore[list-item]
        yield AssistantMessageEvent(
            type="text_delta", partial=grown, content_index=0, delta="half an ans"
        )
        raise OSError("connection reset")

    run = await run_loop(stream)  # type: ignore[arg-type]
    final = run.messages[-1]
    assert final.stop_reason == "error" and "connection reset" in final.error_message
    assert final.text == "half an ans"
    assert [e.type for e in run.rec.events if e.type.startswith("message_")][-3:] == [
        "message_start",
        "message_update",
        "message_end",
    ]
    assert run.rec.of("message_end")[-1].message is final


async def test_provider_stream_ending_without_done_is_an_error() -> None:
    async def stream(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))

    run = await run_loop(stream)  # type: ignore[arg-type]
    final = run.messages[-1]
    assert final.stop_reason == "error"
    assert "ended without a final message" in final.error_message
    assert_events_valid(run.rec.events)


async def test_provider_done_without_start_still_gets_message_start() -> None:
    async def stream(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        yield AssistantMessageEvent(type="done", message=assistant("straight to done"))

    run = await run_loop(stream)  # type: ignore[arg-type]
    assert run.rec.types()[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    assert run.messages[-1].text == "straight to done"


async def test_provider_stream_is_closed_after_the_final_event() -> None:
    closed: list[bool] = []

    async def stream(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        try:
            yield AssistantMessageEvent(type="done", message=assistant("done"))
            yield AssistantMessageEvent(type="text_delta", partial=assistant("never read"))
        finally:
            closed.append(True)

    await run_loop(stream)  # type: ignore[arg-type]
    assert closed == [True]


@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
async def test_failed_reply_with_tool_calls_answers_every_call_without_running_it(
    stop_reason: str,
) -> None:
    log: list[str] = []
    failed = assistant(
        call("a", args={"value": "1"}),
        call("b", args={"value": "2"}),
        stop_reason=stop_reason,
        error="boom",
    )
    stream = FakeStream(failed, default=assistant("never"))
    run = await run_loop(stream, [make_tool(log=log)])
    assert log == [] and stream.count == 1
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult", "toolResult"]
    results = run.messages[2:]
    assert all(r.is_error and "not executed" in text_of(r) for r in results)
    turn_end = run.rec.of("turn_end")[-1]
    assert [r.tool_call_id for r in turn_end.tool_results] == ["a", "b"]
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_failing_loop_hooks_end_the_run_with_an_error_message() -> None:
    def transform(messages: list[Any], signal: Any) -> list[Any]:
        raise RuntimeError("compaction failed")

    run = await run_loop(FakeStream(), transform_context=transform)
    assert run.messages[-1].stop_reason == "error"
    assert "compaction failed" in run.messages[-1].error_message
    assert_events_valid(run.rec.events)

    def should_stop(turn: TurnContext) -> bool:
        raise RuntimeError("policy check failed")

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"}))),
        [make_tool()],
        should_stop_after_turn=should_stop,
    )
    assert "policy check failed" in run.messages[-1].error_message
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_failing_emit_mid_batch_still_leaves_every_call_answered() -> None:
    """Even when the loop itself breaks mid-batch, the transcript stays valid."""

    async def on_event(event: Any) -> None:
        if event.type == "tool_execution_end" and event.tool_call_id == "a":
            raise RuntimeError("sink broke")

    rec = Recorder(on_event)
    stream = FakeStream(assistant(call("a", args={"value": "1"}), call("b", args={"value": "2"})))
    run = await run_loop(stream, [make_tool()], tool_execution="sequential", rec=rec)
    assert (
        run.messages[-1].stop_reason == "error" and "sink broke" in run.messages[-1].error_message
    )
    assert_transcript_valid(run.messages)
    assert rec.events[-1].type == "agent_end"


# -- aborting the run ----------------------------------------------------------------


def slow_scenario(text: str = "x" * 200) -> ScriptedProvider:
    return ScriptedProvider(
        Scenario(name="slow", turns=[ScriptedTurn(text=text)]), chars_per_second=1000, chunk_size=5
    )


async def test_abort_during_streaming_ends_with_an_aborted_message() -> None:
    controller = AbortController()

    async def on_event(event: Any) -> None:
        if event.type == "message_update" and len(rec.of("message_update")) == 3:
            controller.abort()

    rec = Recorder(on_event)
    run = await run_loop(slow_scenario(), signal=controller.signal, rec=rec)  # type: ignore[arg-type]
    final = run.messages[-1]
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert 0 < len(final.text) < 200
    assert rec.types()[-3:] == ["message_end", "turn_end", "agent_end"]


async def test_abort_during_streaming_a_tool_call_answers_the_partial_call() -> None:
    controller = AbortController()
    turn = ScriptedTurn(
        tool_calls=[ScriptedToolCall(name="echo", raw='{"value": "' + "y" * 100 + '"}')]
    )
    provider = ScriptedProvider(
        Scenario(name="s", turns=[turn]), chars_per_second=2000, chunk_size=4
    )

    async def on_event(event: Any) -> None:
        if (
            event.type == "message_update"
            and event.assistant_message_event.type == "toolcall_delta"
        ):
            controller.abort()

    log: list[str] = []
    run = await run_loop(
        provider, [make_tool(log=log)], signal=controller.signal, rec=Recorder(on_event)
    )  # type: ignore[arg-type]
    assert log == []
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult"]
    assert run.messages[1].stop_reason == "aborted"
    assert run.messages[2].is_error
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_abort_of_a_provider_that_ignores_the_signal_still_ends_the_run() -> None:
    controller = AbortController()

    async def deaf(
        model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))
        await anyio.sleep(60)  # never looks at options.signal
        yield AssistantMessageEvent(type="done", message=assistant("too late"))

    async def on_event(event: Any) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            controller.abort()

    started = time.monotonic()
    run = await run_loop(
        deaf, signal=controller.signal, rec=Recorder(on_event), tool_abort_grace=0.05
    )  # type: ignore[arg-type]
    assert time.monotonic() - started < 2
    assert run.messages[-1].stop_reason == "aborted"
    assert run.rec.events[-1].type == "agent_end"


async def test_abort_while_a_tool_honours_the_signal() -> None:
    controller = AbortController()
    started = Gate()

    async def waits(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        started.open()
        await signal.wait()
        signal.throw_if_aborted()
        raise AssertionError("unreachable")

    async def abort_soon() -> None:
        await started.wait()
        controller.abort("user pressed stop")

    stream = FakeStream(assistant(call("t", args={"value": "v"})), default=assistant("never"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        run = await run_loop(stream, [make_tool(execute=waits)], signal=controller.signal)
    result = run.messages[2]
    assert result.is_error and "user pressed stop" in text_of(result)
    # the next request is made with the aborted signal and ends the run
    assert run.messages[-1].stop_reason == "aborted"
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_tool_ignoring_the_abort_is_cancelled_after_the_grace_period() -> None:
    controller = AbortController()
    started = Gate()
    cancelled: list[bool] = []

    async def stubborn(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        started.open()
        try:
            await anyio.sleep(30)
        except BaseException:
            cancelled.append(True)
            raise
        return AgentToolResult.text("finished")

    async def abort_soon() -> None:
        await started.wait()
        controller.abort()

    begin = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        run = await run_loop(
            FakeStream(assistant(call("t", args={"value": "v"}))), [make_tool(execute=stubborn)],
            signal=controller.signal, tool_abort_grace=0.05,
        )  # fmt: skip
    elapsed = time.monotonic() - begin
    assert cancelled == [True] and 0.04 < elapsed < 2
    result = run.messages[2]
    assert result.is_error and "did not stop within 0.05s" in text_of(result)
    assert run.rec.of("tool_execution_end")[0].is_error
    assert run.rec.events[-1].type == "agent_end"


async def test_tool_that_stops_within_the_grace_keeps_its_own_result() -> None:
    controller = AbortController()
    started = Gate()

    async def polite(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        started.open()
        await signal.wait()
        await anyio.sleep(0.01)  # cleaning up, well inside the grace
        return AgentToolResult.text("stopped cleanly, partial output kept")

    async def abort_soon() -> None:
        await started.wait()
        controller.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        run = await run_loop(
            FakeStream(assistant(call("t", args={"value": "v"}))), [make_tool(execute=polite)],
            signal=controller.signal, tool_abort_grace=1.0,
        )  # fmt: skip
    assert text_of(run.messages[2]) == "stopped cleanly, partial output kept"


async def test_run_abort_in_a_sequential_batch_skips_the_calls_never_started() -> None:
    controller = AbortController()
    log: list[str] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        log.append(params.value)
        controller.abort()
        return AgentToolResult.text("first is done")

    reply = assistant(
        call("a", args={"value": "1"}),
        call("b", args={"value": "2"}),
        call("c", args={"value": "3"}),
    )
    run = await run_loop(
        FakeStream(reply),
        [make_tool(execute=execute)],
        tool_execution="sequential",
        signal=controller.signal,
    )
    assert log == ["1"]
    results = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["a", "b", "c"]
    assert not results[0].is_error
    assert all(r.is_error and "skipped" in text_of(r) for r in results[1:])
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_run_abort_during_parallel_preflight_skips_the_rest() -> None:
    controller = AbortController()
    log: list[str] = []

    def before(ctx: Any, signal: Any) -> None:
        if ctx.tool_call.id == "b":
            controller.abort()

    reply = assistant(
        call("a", args={"value": "1"}),
        call("b", args={"value": "2"}),
        call("c", args={"value": "3"}),
    )
    run = await run_loop(
        FakeStream(reply), [make_tool(log=log)], before_tool_call=before, signal=controller.signal
    )
    assert log == []
    results = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["a", "b", "c"]
    assert all(r.is_error for r in results)
    assert "skipped" in text_of(results[2])
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_aborted_before_tool_call_hook_wins_over_its_result() -> None:
    controller = AbortController()

    def before(ctx: Any, signal: Any) -> None:
        controller.abort()

    log: list[str] = []
    run = await run_loop(
        FakeStream(assistant(call("a", args={"value": "1"}))),
        [make_tool(log=log)],
        before_tool_call=before,
        signal=controller.signal,
    )
    assert log == [] and run.messages[2].is_error and "aborted" in text_of(run.messages[2])


# -- aborting one call ---------------------------------------------------------------


async def test_aborting_one_call_leaves_the_rest_of_the_batch_and_the_turn() -> None:
    aborts = ToolCallAborts()
    release = Gate()

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        if tool_call_id == "slow":
            await signal.wait()
            raise AbortError(signal.reason)
        await release.wait()
        return AgentToolResult.text("fine")

    async def on_event(event: Any) -> None:
        if event.type == "tool_execution_phase" or event.type == "tool_arguments":
            if event.tool_call_id == "fast" and "slow" in aborts:
                assert aborts.abort("slow")
                release.open()

    reply = assistant(call("slow", args={"value": "1"}), call("fast", args={"value": "2"}))
    stream = FakeStream(reply, assistant("carry on"))
    run = await run_loop(
        stream, [make_tool(execute=execute)], tool_call_aborts=aborts, rec=Recorder(on_event)
    )
    slow, fast = run.messages[2], run.messages[3]
    assert slow.tool_call_id == "slow" and slow.is_error and "aborted by user" in text_of(slow)
    assert fast.tool_call_id == "fast" and not fast.is_error
    assert stream.count == 2 and run.messages[-1].text == "carry on"
    assert not aborts.abort("slow")  # no longer in flight
    assert "slow" not in aborts and "fast" not in aborts


async def test_aborting_one_stubborn_call_cancels_it_after_the_grace() -> None:
    aborts = ToolCallAborts()
    started = Gate()

    async def stubborn(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        started.open()
        await anyio.sleep(30)
        return AgentToolResult.text("never")

    async def abort_it() -> None:
        await started.wait()
        assert aborts.abort("t", "not needed any more")

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_it)
        stream = FakeStream(assistant(call("t", args={"value": "v"})), assistant("next turn"))
        run = await run_loop(
            stream, [make_tool(execute=stubborn)], tool_call_aborts=aborts, tool_abort_grace=0.05
        )
    assert run.messages[2].is_error and "not needed any more" in text_of(run.messages[2])
    assert run.messages[-1].text == "next turn"


async def test_a_call_can_be_aborted_from_its_start_event() -> None:
    aborts = ToolCallAborts()
    log: list[str] = []

    async def on_event(event: Any) -> None:
        if event.type == "tool_execution_start" and event.tool_call_id == "b":
            assert aborts.abort("b")

    reply = assistant(call("a", args={"value": "1"}), call("b", args={"value": "2"}))
    run = await run_loop(
        FakeStream(reply, assistant("ok")),
        [make_tool(log=log)],
        tool_call_aborts=aborts,
        rec=Recorder(on_event),
    )
    assert log == ["1"]
    assert run.messages[3].tool_call_id == "b" and run.messages[3].is_error
    assert run.messages[-1].text == "ok"


async def test_unknown_call_id_abort_returns_false() -> None:
    assert ToolCallAborts().abort("nope") is False


async def test_agent_end_is_always_the_last_event() -> None:
    runs = [
        await run_loop(FakeStream()),
        await run_loop(FakeStream(RuntimeError("x"))),
        await run_loop(FakeStream(assistant(call("t", args={"value": "v"}))), [make_tool()]),
        await run_loop(FakeStream(assistant(call("t", "missing")))),
    ]
    for run in runs:
        assert run.rec.events[-1].type == "agent_end"
        assert run.rec.events[-1].messages == run.messages
        assert_events_valid(run.rec.events)


def test_model_field_defaults() -> None:
    assert MODEL.provider == "test"


async def test_duplicate_call_ids_each_get_a_result_and_follow_the_run_abort() -> None:
    """Some servers repeat tool call ids; each call must still be answered and abortable."""
    controller = AbortController()
    both_running = Gate()
    running = 0
    signals: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        nonlocal running
        signals.append(signal)
        running += 1
        if running == 2:
            both_running.open()
        if params.value == "quick":
            return AgentToolResult.text("quick done")
        await signal.wait()
        raise AbortError(signal.reason)

    async def abort_when_both_run() -> None:
        await both_running.wait()
        await anyio.sleep(0.01)  # the quick one has finished by now
        controller.abort("stop all")

    reply = assistant(call("dup", args={"value": "quick"}), call("dup", args={"value": "slow"}))
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_when_both_run)
        run = await run_loop(
            FakeStream(reply), [make_tool(execute=execute)], signal=controller.signal
        )
    results = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("dup", False), ("dup", True)]
    assert "stop all" in text_of(results[1])
    assert signals[0] is not signals[1]
