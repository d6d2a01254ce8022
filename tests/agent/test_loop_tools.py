"""Tool execution in the loop: results, scheduling, terminate, hooks, updates
(ported from pi's agent-loop.test.ts plus the workbench contract)."""

from __future__ import annotations

from typing import Any

import anyio
from tests.agent.helpers import (
    FakeStream,
    Gate,
    Value,
    assert_events_valid,
    assert_transcript_valid,
    assistant,
    call,
    make_tool,
    run_loop,
    text_of,
)
from pydantic import BaseModel

from workbench.agent import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ImageContent,
    TextContent,
    ToolResultMessage,
)


def two_calls(name: str = "echo", first: str = "first", second: str = "second") -> Any:
    return assistant(
        call("tool-1", name, {"value": first}), call("tool-2", name, {"value": second})
    )


async def test_tool_call_executes_and_its_result_feeds_the_next_turn() -> None:
    log: list[str] = []
    stream = FakeStream(assistant(call("tool-1", args={"value": "hello"})), assistant("done"))
    run = await run_loop(stream, [make_tool(log=log)])

    assert log == ["hello"]
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult", "assistant"]
    result = run.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_call_id, result.tool_name, result.is_error) == ("tool-1", "echo", False)
    assert text_of(result) == "echoed: hello" and result.details == {"value": "hello"}

    start = run.rec.of("tool_execution_start")[0]
    assert (start.tool_call_id, start.tool_name, start.args) == (
        "tool-1",
        "echo",
        {"value": "hello"},
    )
    end = run.rec.of("tool_execution_end")[0]
    assert end.is_error is False and text_of(end.result) == "echoed: hello"
    # the second request sees the result
    assert [m.role for m in stream.requests[1].context.messages] == [
        "user",
        "assistant",
        "toolResult",
    ]
    assert run.rec.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end",
        "tool_execution_start", "tool_arguments", "tool_execution_end",
        "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    turn_end = run.rec.of("turn_end")[0]
    assert [r.tool_call_id for r in turn_end.tool_results] == ["tool-1"]
    assert_events_valid(run.rec.events)


async def test_length_truncated_message_fails_every_call_without_executing() -> None:
    log: list[str] = []
    truncated = assistant(
        call("tool-1", args={"value": "hel"}),
        call("tool-2", args={"value": "x"}),
        stop_reason="length",
    )
    stream = FakeStream(truncated, assistant("done"))
    run = await run_loop(stream, [make_tool(log=log)])

    assert log == []
    ends = run.rec.of("tool_execution_end")
    assert [e.tool_call_id for e in ends] == ["tool-1", "tool-2"]
    assert all(e.is_error for e in ends)
    assert all("output token limit" in text_of(e.result) for e in ends)
    # the loop goes on so the model can re-issue the calls
    assert stream.count == 2
    assert [m.role for m in run.messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert_transcript_valid(run.messages)
    assert_events_valid(run.rec.events)


async def test_before_tool_call_may_mutate_args_without_revalidation() -> None:
    seen: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        seen.append(params.value)
        return AgentToolResult.text("ok")

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        assert isinstance(ctx.args, Value) and ctx.args.value == "hello"
        ctx.args.value = 123  # not a str: no revalidation happens

    stream = FakeStream(assistant(call("tool-1", args={"value": "hello"})), assistant("done"))
    await run_loop(stream, [make_tool(execute=execute)], before_tool_call=before)
    assert seen == [123]


async def test_before_tool_call_may_replace_args() -> None:
    seen: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        seen.append(params)
        return AgentToolResult.text("ok")

    replacement = Value(value="replaced")

    async def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        ctx.args = replacement

    stream = FakeStream(assistant(call("tool-1", args={"value": "hello"})), assistant("done"))
    await run_loop(stream, [make_tool(execute=execute)], before_tool_call=before)
    assert seen == [replacement]


async def test_before_tool_call_context_contents() -> None:
    contexts: list[BeforeToolCallContext] = []
    roles: list[list[str]] = []
    tool = make_tool()
    reply = assistant("text first", call("tool-1", args={"value": "v"}))

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        contexts.append(ctx)
        roles.append([m.role for m in ctx.context.messages])
        assert signal is not None and not signal.aborted

    await run_loop(FakeStream(reply, assistant("done")), [tool], before_tool_call=before)
    (ctx,) = contexts
    assert ctx.assistant_message.text == "text first"
    assert ctx.tool_call.id == "tool-1" and ctx.tool is tool
    assert roles == [["user", "assistant"]]  # the live context, as of the call


async def test_prepare_arguments_reshapes_raw_arguments_before_validation() -> None:
    class Edit(BaseModel):
        old_text: str
        new_text: str

    class Edits(BaseModel):
        edits: list[Edit]

    def prepare(args: dict[str, Any]) -> dict[str, Any]:
        if isinstance(args.get("old_text"), str) and isinstance(args.get("new_text"), str):
            return {
                "edits": [
                    *args.get("edits", []),
                    {"old_text": args["old_text"], "new_text": args["new_text"]},
                ]
            }
        return args

    seen: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        seen.append(params.model_dump())
        return AgentToolResult.text(f"edited {len(params.edits)}")

    tool = make_tool("edit", execute, params=Edits, prepare=prepare)
    stream = FakeStream(
        assistant(call("tool-1", "edit", {"old_text": "before", "new_text": "after"})),
        assistant("done"),
    )
    run = await run_loop(stream, [tool])

    assert seen == [{"edits": [{"old_text": "before", "new_text": "after"}]}]
    (args_event,) = run.rec.of("tool_arguments")
    assert args_event.parsed == {"old_text": "before", "new_text": "after"}
    assert args_event.prepared == {"edits": [{"old_text": "before", "new_text": "after"}]}
    assert args_event.validated == {"edits": [{"old_text": "before", "new_text": "after"}]}


# -- scheduling ----------------------------------------------------------------------


async def test_parallel_batch_ends_in_completion_order_but_results_keep_source_order() -> None:
    release_first = Gate()
    second_ran_while_first_waited: list[bool] = []
    first_done = False

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        nonlocal first_done
        if params.value == "first":
            await release_first.wait()
            first_done = True
        else:
            second_ran_while_first_waited.append(not first_done)
            release_first.open()
        return AgentToolResult.text(f"echoed: {params.value}")

    stream = FakeStream(two_calls(), assistant("done"))
    run = await run_loop(stream, [make_tool(execute=execute)], tool_execution="parallel")

    assert second_ran_while_first_waited == [True]
    assert run.rec.ids("tool_execution_end") == ["tool-2", "tool-1"]
    assert run.rec.result_message_ids() == ["tool-1", "tool-2"]
    (turn_end, _) = run.rec.of("turn_end")
    assert [r.tool_call_id for r in turn_end.tool_results] == ["tool-1", "tool-2"]
    assert [m.tool_call_id for m in run.messages if isinstance(m, ToolResultMessage)] == [
        "tool-1",
        "tool-2",
    ]
    assert_events_valid(run.rec.events)


async def test_parallel_preflight_runs_in_order_before_any_execution() -> None:
    order: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        order.append(f"before:{ctx.tool_call.id}")

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        order.append(f"execute:{tool_call_id}")
        return AgentToolResult.text("ok")

    stream = FakeStream(two_calls(), assistant("done"))
    run = await run_loop(stream, [make_tool(execute=execute)], before_tool_call=before)
    assert order[:2] == ["before:tool-1", "before:tool-2"]
    assert sorted(order[2:]) == ["execute:tool-1", "execute:tool-2"]
    starts = [i for i, e in enumerate(run.rec.events) if e.type == "tool_execution_start"]
    first_end = next(i for i, e in enumerate(run.rec.events) if e.type == "tool_execution_end")
    assert max(starts) < first_end


async def test_sequential_config_runs_one_call_at_a_time() -> None:
    active = 0
    peak = 0
    log: list[str] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await anyio.sleep(0.01)
        log.append(params.value)
        active -= 1
        return AgentToolResult.text("ok")

    stream = FakeStream(two_calls(), assistant("done"))
    run = await run_loop(stream, [make_tool(execute=execute)], tool_execution="sequential")
    assert peak == 1 and log == ["first", "second"]
    # sequential: each call's result message directly follows its end event
    types = [
        e.type
        for e in run.rec.events
        if e.type in ("tool_execution_end", "message_end", "tool_execution_start")
    ]
    assert types[2:9] == [
        "tool_execution_start", "tool_execution_end", "message_end",
        "tool_execution_start", "tool_execution_end", "message_end", "message_end",
    ][: len(types[2:9])]  # fmt: skip


async def test_a_sequential_tool_forces_the_whole_batch_sequential() -> None:
    release = Gate()
    order: list[str] = []

    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        order.append(f"slow:{params.value}")
        with anyio.move_on_after(0.05):
            await release.wait()
        order.append(f"slow-done:{params.value}")
        return AgentToolResult.text("slow")

    async def fast(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        order.append(f"fast:{params.value}")
        release.open()
        return AgentToolResult.text("fast")

    tools = [make_tool("slow", slow, mode="sequential"), make_tool("fast", fast)]
    stream = FakeStream(
        assistant(call("tool-1", "slow", {"value": "a"}), call("tool-2", "fast", {"value": "b"})),
        assistant("done"),
    )
    run = await run_loop(stream, tools)  # config is parallel (the default)

    assert order == ["slow:a", "slow-done:a", "fast:b"]
    assert run.rec.result_message_ids() == ["tool-1", "tool-2"]


async def test_sequential_tool_alone_runs_its_calls_one_after_another() -> None:
    release_first = Gate()
    parallel_observed = False
    first_done = False

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        nonlocal first_done, parallel_observed
        if params.value == "first":
            with anyio.move_on_after(0.05):
                await release_first.wait()
            first_done = True
        elif not first_done:
            parallel_observed = True
        return AgentToolResult.text("ok")

    stream = FakeStream(two_calls("slow"), assistant("done"))
    run = await run_loop(stream, [make_tool("slow", execute, mode="sequential")])
    assert parallel_observed is False
    assert run.rec.result_message_ids() == ["tool-1", "tool-2"]


async def test_explicitly_parallel_tools_run_concurrently() -> None:
    release_first = Gate()
    parallel_observed = False

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        nonlocal parallel_observed
        if params.value == "first":
            await release_first.wait()
        else:
            parallel_observed = True
            release_first.open()
        return AgentToolResult.text("ok")

    stream = FakeStream(two_calls(), assistant("done"))
    await run_loop(stream, [make_tool(execute=execute, mode="parallel")])
    assert parallel_observed


async def test_an_unknown_tool_does_not_make_a_batch_sequential() -> None:
    release_first = Gate()
    parallel_observed = False

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        nonlocal parallel_observed
        if params.value == "first":
            await release_first.wait()
        else:
            parallel_observed = True
            release_first.open()
        return AgentToolResult.text("ok")

    reply = assistant(
        call("tool-1", args={"value": "first"}),
        call("x", "nope", {}),
        call("tool-2", args={"value": "second"}),
    )
    run = await run_loop(FakeStream(reply, assistant("done")), [make_tool(execute=execute)])
    assert parallel_observed
    assert run.rec.result_message_ids() == ["tool-1", "x", "tool-2"]


# -- terminate -----------------------------------------------------------------------


def terminating(value_terminates: Any = lambda v: True) -> Any:
    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        return AgentToolResult(
            content=[TextContent(text=f"echoed: {params.value}")],
            terminate=value_terminates(params.value),
        )

    return execute


async def test_batch_stops_the_loop_when_every_result_terminates() -> None:
    stream = FakeStream(two_calls(), default=assistant(call("again", args={"value": "x"})))
    run = await run_loop(stream, [make_tool(execute=terminating())])
    assert stream.count == 1
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult", "toolResult"]
    assert len(run.rec.of("turn_end")) == 1
    assert run.rec.events[-1].type == "agent_end"


async def test_batch_continues_when_not_every_result_terminates() -> None:
    stream = FakeStream(two_calls(), assistant("done"))
    run = await run_loop(stream, [make_tool(execute=terminating(lambda v: v == "first"))])
    assert stream.count == 2
    assert [m.role for m in run.messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]


async def test_blocked_call_with_terminate_stops_the_loop() -> None:
    log: list[str] = []

    async def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="Blocked by policy", terminate=True)

    stream = FakeStream(
        assistant(call("tool-1", args={"value": "hello"})), default=assistant("should not run")
    )
    run = await run_loop(stream, [make_tool(log=log)], before_tool_call=before)
    assert log == [] and stream.count == 1
    result = run.messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert result.content == [TextContent(text="Blocked by policy")]


async def test_mixed_batch_with_one_terminating_block_continues() -> None:
    log: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult | None:
        if ctx.args.value == "first":
            return BeforeToolCallResult(block=True, reason="Blocked first", terminate=True)
        return None

    stream = FakeStream(two_calls(), assistant("done"))
    run = await run_loop(stream, [make_tool(log=log)], before_tool_call=before)
    assert log == ["second"] and stream.count == 2
    first = run.messages[2]
    assert (
        isinstance(first, ToolResultMessage)
        and first.is_error
        and text_of(first) == "Blocked first"
    )


async def test_block_without_reason_has_a_default_message() -> None:
    stream = FakeStream(assistant(call("tool-1", args={"value": "x"})), assistant("done"))
    run = await run_loop(
        stream, [make_tool()], before_tool_call=lambda ctx, s: BeforeToolCallResult(block=True)
    )
    assert text_of(run.messages[2]) == "Tool execution was blocked"
    assert run.messages[2].is_error


async def test_after_tool_call_may_mark_the_batch_terminating() -> None:
    stream = FakeStream(
        assistant(call("tool-1", args={"value": "x"})),
        default=assistant(call("again", args={"value": "y"})),
    )
    await run_loop(
        stream, [make_tool()], after_tool_call=lambda ctx, s: AfterToolCallResult(terminate=True)
    )
    assert stream.count == 1


async def test_after_tool_call_may_cancel_a_terminate() -> None:
    stream = FakeStream(assistant(call("tool-1", args={"value": "x"})), assistant("done"))
    await run_loop(
        stream,
        [make_tool(execute=terminating())],
        after_tool_call=lambda ctx, s: AfterToolCallResult(terminate=False),
    )
    assert stream.count == 2


# -- after_tool_call overrides -------------------------------------------------------


async def test_after_tool_call_sees_the_executed_result() -> None:
    seen: list[AfterToolCallContext] = []

    async def after(ctx: AfterToolCallContext, signal: Any) -> None:
        seen.append(ctx)

    stream = FakeStream(assistant(call("tool-1", args={"value": "v"})), assistant("done"))
    run = await run_loop(stream, [make_tool()], after_tool_call=after)
    (ctx,) = seen
    assert text_of(ctx.result) == "echoed: v" and ctx.is_error is False
    assert ctx.args == Value(value="v") and ctx.tool_call.id == "tool-1"
    assert text_of(run.messages[2]) == "echoed: v"  # None keeps everything


async def test_after_tool_call_fields_left_none_keep_the_executed_values() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    cases = [
        (AfterToolCallResult(content=[image]), [image], {"value": "v"}, False),
        (
            AfterToolCallResult(details={"new": 1}),
            [TextContent(text="echoed: v")],
            {"new": 1},
            False,
        ),
        (AfterToolCallResult(is_error=True), [TextContent(text="echoed: v")], {"value": "v"}, True),
        (AfterToolCallResult(), [TextContent(text="echoed: v")], {"value": "v"}, False),
    ]
    for override, content, details, is_error in cases:
        stream = FakeStream(assistant(call("tool-1", args={"value": "v"})), assistant("done"))
        run = await run_loop(stream, [make_tool()], after_tool_call=lambda ctx, s, o=override: o)
        result = run.messages[2]
        assert isinstance(result, ToolResultMessage)
        assert (result.content, result.details, result.is_error) == (content, details, is_error), (
            override
        )
        end = run.rec.of("tool_execution_end")[0]
        assert end.is_error == is_error and end.result.content == content


async def test_after_tool_call_no_deep_merge_of_details() -> None:
    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        return AgentToolResult.text("ok", details={"a": 1, "b": 2})

    stream = FakeStream(assistant(call("tool-1", args={"value": "v"})), assistant("done"))
    run = await run_loop(
        stream,
        [make_tool(execute=execute)],
        after_tool_call=lambda c, s: AfterToolCallResult(details={"b": 3}),
    )
    assert run.messages[2].details == {"b": 3}


async def test_after_tool_call_can_clear_an_error() -> None:
    async def boom(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise RuntimeError("kaput")

    seen: list[bool] = []

    def after(ctx: AfterToolCallContext, signal: Any) -> AfterToolCallResult:
        seen.append(ctx.is_error)
        return AfterToolCallResult(is_error=False, content=[TextContent(text="recovered")])

    stream = FakeStream(assistant(call("tool-1", args={"value": "v"})), assistant("done"))
    run = await run_loop(stream, [make_tool(execute=boom)], after_tool_call=after)
    assert seen == [True]
    assert run.messages[2].is_error is False and text_of(run.messages[2]) == "recovered"


# -- failures become error results ---------------------------------------------------


async def test_raising_tool_becomes_an_error_result() -> None:
    async def boom(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise ValueError("disk on fire")

    stream = FakeStream(assistant(call("tool-1", args={"value": "v"})), assistant("done"))
    run = await run_loop(stream, [make_tool(execute=boom)])
    result = run.messages[2]
    assert result.is_error and "disk on fire" in text_of(result)
    assert run.rec.of("tool_execution_end")[0].is_error
    assert stream.count == 2


async def test_raising_tool_without_message_names_the_exception() -> None:
    async def boom(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise KeyError

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(execute=boom)],
    )
    assert "KeyError" in text_of(run.messages[2])


async def test_raising_before_hook_is_an_error_result_and_execute_never_runs() -> None:
    log: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        raise RuntimeError("policy crashed")

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(log=log)],
        before_tool_call=before,
    )
    assert log == []
    assert run.messages[2].is_error and "policy crashed" in text_of(run.messages[2])
    assert_events_valid(run.rec.events)


async def test_raising_after_hook_is_an_error_result() -> None:
    log: list[str] = []

    async def after(ctx: AfterToolCallContext, signal: Any) -> None:
        raise RuntimeError("audit crashed")

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(log=log)],
        after_tool_call=after,
    )
    assert log == ["v"]
    assert run.messages[2].is_error and "audit crashed" in text_of(run.messages[2])


async def test_sync_execute_and_plain_return_values_are_accepted() -> None:
    def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> str:
        return f"plain {params.value}"

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(execute=execute)],
    )  # type: ignore[arg-type]
    assert text_of(run.messages[2]) == "plain v" and not run.messages[2].is_error


async def test_before_tool_call_may_answer_with_a_supplied_result() -> None:
    log: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(result=AgentToolResult.text("from a person"), is_error=False)

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(log=log)],
        before_tool_call=before,
    )
    assert log == []
    result = run.messages[2]
    assert text_of(result) == "from a person" and not result.is_error and result.injected
    assert run.rec.of("tool_execution_end")[0].injected


# -- updates -------------------------------------------------------------------------


async def test_updates_are_delivered_in_order_between_start_and_end() -> None:
    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        for i in range(5):
            on_update(AgentToolResult.text(f"step {i}", details={"i": i}))
            if i % 2:
                await anyio.sleep(0)
        return AgentToolResult.text("done")

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(execute=execute)],
    )
    updates = run.rec.of("tool_execution_update")
    assert [text_of(u.partial_result) for u in updates] == [f"step {i}" for i in range(5)]
    assert all(u.tool_call_id == "t" and u.args == {"value": "v"} for u in updates)
    assert_events_valid(run.rec.events)


async def test_updates_sent_after_execute_returned_are_ignored() -> None:
    captured: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        captured.append(on_update)
        on_update(AgentToolResult.text("running"))
        return AgentToolResult(content=[TextContent(text="ok")], terminate=True)

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"}))), [make_tool(execute=execute)]
    )
    count = len(run.rec.events)
    captured[0](AgentToolResult.text("late"))
    await anyio.sleep(0.01)
    assert len(run.rec.events) == count
    assert [text_of(u.partial_result) for u in run.rec.of("tool_execution_update")] == ["running"]


async def test_late_update_from_a_settled_call_is_ignored_while_another_runs() -> None:
    captured: list[Any] = []
    release = Gate()
    settled = Gate()

    async def quick(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        captured.append(on_update)
        return AgentToolResult.text("quick")

    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await release.wait()
        return AgentToolResult.text("slow")

    async def on_event(event: Any) -> None:
        if event.type == "tool_execution_end" and event.tool_call_id == "q":
            settled.open()

    from tests.agent.helpers import Recorder

    rec = Recorder(on_event)
    stream = FakeStream(
        assistant(call("q", "quick", {"value": "1"}), call("s", "slow", {"value": "2"})),
        assistant("done"),
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            lambda: run_loop(stream, [make_tool("quick", quick), make_tool("slow", slow)], rec=rec)
        )
        await settled.wait()
        before = len(rec.events)
        captured[0](AgentToolResult.text("late"))
        await anyio.sleep(0.01)
        assert len(rec.events) == before
        release.open()
    assert rec.of("tool_execution_update") == []


async def test_update_values_that_are_not_results_are_converted() -> None:
    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        on_update("plain text progress")
        return AgentToolResult.text("done")

    run = await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool(execute=execute)],
    )
    (update,) = run.rec.of("tool_execution_update")
    assert text_of(update.partial_result) == "plain text progress"


async def test_tool_receives_call_id_and_a_per_call_signal() -> None:
    seen: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        seen.append((tool_call_id, signal))
        return AgentToolResult.text("ok")

    from workbench.agent import AbortController

    run_controller = AbortController()
    stream = FakeStream(two_calls(), assistant("done"))
    await run_loop(stream, [make_tool(execute=execute)], signal=run_controller.signal)
    ids = sorted(s[0] for s in seen)
    assert ids == ["tool-1", "tool-2"]
    signals = [s[1] for s in seen]
    assert signals[0] is not signals[1]
    assert all(s is not run_controller.signal and not s.aborted for s in signals)
