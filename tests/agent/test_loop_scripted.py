"""The stream builder and the scripted provider, as the loop sees them: event
sequences, turn picking, call ids, usage estimates, failures and aborts."""

from __future__ import annotations

from typing import Any

import pytest
from tests.agent.helpers import FakeStream, assistant, call, make_tool, run_loop, user

from workbench.agent import (
    AbortController,
    AssistantMessage,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from workbench.agent.stream_apply import parse_arguments_leniently
from workbench.providers.scripted import (
    Branch,
    ResultMatch,
    Scenario,
    ScriptedProvider,
    ScriptedToolCall,
    ScriptedTurn,
)
from workbench.providers.stream_builder import StreamBuilder

# -- the builder ---------------------------------------------------------------------


def test_builder_interleaves_blocks_and_closes_them_in_opening_order() -> None:
    b = StreamBuilder(Model(id="m", provider="p"))
    events = b.start() + b.text("a") + b.thinking("t") + b.text("b")
    first, more = b.begin_tool_call("c1", "x")
    events += more
    second, more = b.begin_tool_call("c2", "y")
    events += more
    events += b.tool_call_delta(first, '{"a":') + b.tool_call_delta(second, "{}") + b.text("c")
    events += b.tool_call_delta(first, "1}") + b.done()
    assert [(e.type, e.content_index) for e in events] == [
        ("start", None),
        ("text_start", 0), ("text_delta", 0), ("text_end", 0),
        ("thinking_start", 1), ("thinking_delta", 1), ("thinking_end", 1),
        ("text_start", 2), ("text_delta", 2), ("text_end", 2),
        ("toolcall_start", 3), ("toolcall_start", 4),
        ("toolcall_delta", 3), ("toolcall_delta", 4),
        ("text_start", 5), ("text_delta", 5),
        ("toolcall_delta", 3),
        ("toolcall_end", 3), ("toolcall_end", 4), ("text_end", 5),
        ("done", None),
    ]  # fmt: skip
    assert b.message.content == [
        TextContent(text="a"),
        ThinkingContent(thinking="t"),
        TextContent(text="b"),
        ToolCall(id="c1", name="x", arguments={"a": 1}, raw_arguments='{"a":1}'),
        ToolCall(id="c2", name="y", arguments={}, raw_arguments="{}"),
        TextContent(text="c"),
    ]
    assert b.message.stop_reason == "toolUse" and b.finished
    assert events[-1].message is b.message
    assert all(e.partial is b.message for e in events[:-1])


def test_builder_consecutive_text_deltas_extend_one_block() -> None:
    b = StreamBuilder(Model(id="m"))
    events = b.start() + b.text("Hel") + b.text("lo") + b.done()
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hel", "lo"]
    assert b.message.content == [TextContent(text="Hello")] and b.message.stop_reason == "stop"


def test_builder_end_block_is_idempotent_and_names_can_grow() -> None:
    b = StreamBuilder(Model(id="m"))
    b.start()
    index, _ = b.begin_tool_call("c", "read")
    b.tool_call_name(index, "_file")
    b.tool_call_delta(index, '{"path": "a"}')
    assert [e.type for e in b.end_block(index)] == ["toolcall_end"]
    assert b.end_block(index) == []
    assert b.message.content[0] == ToolCall(
        id="c", name="read_file", arguments={"path": "a"}, raw_arguments='{"path": "a"}'
    )


def test_builder_error_keeps_content_and_closes_blocks() -> None:
    b = StreamBuilder(Model(id="m"))
    b.start()
    b.text("partial")
    index, _ = b.begin_tool_call("c", "x")
    b.tool_call_delta(index, '{"trunc')
    events = b.error("connection reset", usage=Usage(input=3))
    assert [e.type for e in events] == [
        "toolcall_end",
        "error",
    ]  # the text closed when the call began
    final = events[-1].message
    assert final.stop_reason == "error" and final.error_message == "connection reset"
    assert final.usage.input == 3
    assert final.content[1].raw_arguments == '{"trunc' and final.content[1].arguments == {}
    aborted = StreamBuilder(Model(id="m"))
    assert aborted.error("Request was aborted", aborted=True)[-1].message.stop_reason == "aborted"


@pytest.mark.parametrize(
    ("raw", "parsed"), [("", {}), ("  ", {}), ('{"a": 1}', {"a": 1}), ("[1]", {}), ("{bad", {})]
)
def test_lenient_argument_parsing(raw: str, parsed: dict[str, Any]) -> None:
    assert parse_arguments_leniently(raw) == parsed


def test_builder_handles_many_open_tool_calls() -> None:
    b = StreamBuilder(Model(id="m"))
    b.start()
    indexes = [b.begin_tool_call(f"c{i}", "t")[0] for i in range(300)]
    for i in reversed(indexes):
        b.tool_call_delta(i, f'{{"i": {i}}}')
    events = b.done()
    assert [e.content_index for e in events[:-1]] == indexes
    assert [c.arguments["i"] for c in b.message.content] == list(range(300))


# -- the scripted provider -----------------------------------------------------------


async def play(provider: ScriptedProvider, messages: list[Any], signal: Any = None) -> list[Any]:
    context = LlmContext("sys", messages, [])
    return [e async for e in provider(provider.model, context, StreamOptions(signal=signal))]


async def test_scripted_turn_streams_thinking_text_and_calls_in_chunks() -> None:
    turn = ScriptedTurn(
        thinking="hmm",
        text="Hello there",
        tool_calls=[
            ScriptedToolCall(name="a", arguments={"v": 1}),
            ScriptedToolCall(name="b", raw='{"v": ', id="given"),
        ],
    )
    provider = ScriptedProvider(Scenario(name="s", turns=[turn]), chunk_size=4)
    events = await play(provider, [user("hi")])
    assert [(e.type, e.content_index, e.delta) for e in events] == [
        ("start", None, None),
        ("thinking_start", 0, None), ("thinking_delta", 0, "hmm"), ("thinking_end", 0, None),
        ("text_start", 1, None), ("text_delta", 1, "Hell"), ("text_delta", 1, "o th"),
        ("text_delta", 1, "ere"), ("text_end", 1, None),
        ("toolcall_start", 2, None), ("toolcall_delta", 2, '{"v"'), ("toolcall_delta", 2, ": 1}"),
        ("toolcall_start", 3, None), ("toolcall_delta", 3, '{"v"'), ("toolcall_delta", 3, ": "),
        ("toolcall_end", 2, None), ("toolcall_end", 3, None),
        ("done", None, None),
    ]  # fmt: skip
    final = events[-1].message
    assert [c.id for c in final.tool_calls] == ["call_1_1", "given"]
    assert final.tool_calls[1].raw_arguments == '{"v": ' and final.tool_calls[1].arguments == {}
    assert (
        final.stop_reason == "toolUse"
        and final.model == "scripted"
        and final.provider == "scripted"
    )
    # 4 characters a token: "sys" + "hi" -> 2; "hmm" + "Hello there" + both argument strings -> 8
    assert final.usage == Usage(input=2, output=8, total_tokens=10)


async def test_scripted_usage_estimate_counts_the_whole_context() -> None:
    provider = ScriptedProvider(
        Scenario(name="s", turns=[ScriptedTurn(text="a"), ScriptedTurn(text="b" * 8)])
    )
    history: list[Any] = [user("x" * 40), assistant("y" * 20)]
    result = ToolResultMessage(
        tool_call_id="t", tool_name="n", content=[TextContent(text="z" * 16)]
    )
    events = await play(provider, [*history, result, user("w" * 4)])
    # sys 3 + 40 + 20 + 16 + 4 = 83 chars -> 21 tokens; reply 8 chars -> 3
    assert events[-1].message.usage == Usage(input=21, output=3, total_tokens=24)
    again = await play(provider, [*history, result, user("w" * 4)])
    assert again[-1].message.usage == events[-1].message.usage
    shorter = await play(provider, [user("x" * 40), assistant("y")])
    assert shorter[-1].message.usage.input == (3 + 40 + 1) // 4 + 1


async def test_scripted_turns_follow_the_replies_so_far_and_retry_aborted_ones() -> None:
    turns = [ScriptedTurn(text="first"), ScriptedTurn(text="second")]
    provider = ScriptedProvider(Scenario(name="s", turns=turns))
    assert (await play(provider, [user("a")]))[-1].message.text == "first"
    done = assistant("first")
    assert (await play(provider, [user("a"), done, user("b")]))[-1].message.text == "second"
    aborted = AssistantMessage(stop_reason="aborted")
    assert (await play(provider, [user("a"), aborted, user("b")]))[-1].message.text == "first"
    past_end = await play(provider, [user("a"), done, assistant("second"), user("c")])
    assert past_end[-1].message.text == "(The scripted scenario has no more turns.)"
    # the same provider answers unrelated contexts independently
    assert (await play(provider, [user("fresh")]))[-1].message.text == "first"
    # call ids count every assistant reply, aborted ones too
    calls = ScriptedProvider(
        Scenario(name="c", turns=[ScriptedTurn(tool_calls=[ScriptedToolCall(name="t")])])
    )
    final = (await play(calls, [user("a"), aborted, user("b")]))[-1].message
    assert final.tool_calls[0].id == "call_2_1"


async def test_scripted_branches_pick_a_turn_from_the_last_results() -> None:
    denied = ScriptedTurn(text="it was denied")
    turn = ScriptedTurn(
        text="it worked",
        branches=[Branch(when=ResultMatch(tool="edit", is_error=True), turn=denied)],
    )
    provider = ScriptedProvider(Scenario(name="s", turns=[ScriptedTurn(text="x"), turn]))
    base = [user("a"), assistant(call("e", "edit"))]
    ok = ToolResultMessage(tool_call_id="e", tool_name="edit", content=[TextContent(text="fine")])
    bad = ToolResultMessage(
        tool_call_id="e", tool_name="edit", content=[TextContent(text="no")], is_error=True
    )
    assert (await play(provider, [*base, ok]))[-1].message.text == "it worked"
    assert (await play(provider, [*base, bad]))[-1].message.text == "it was denied"
    contains = ResultMatch(contains="fin")
    assert contains.matches([ok]) and not contains.matches([bad])


async def test_scripted_error_turn_fails_like_a_provider() -> None:
    provider = ScriptedProvider(
        Scenario(name="s", turns=[ScriptedTurn(text="partial", error="rate limited")])
    )
    final = (await play(provider, [user("a")]))[-1]
    assert final.type == "error" and final.message.stop_reason == "error"
    assert final.message.error_message == "rate limited" and final.message.text == "partial"


async def test_scripted_stop_reason_override() -> None:
    turn = ScriptedTurn(
        tool_calls=[ScriptedToolCall(name="t", raw='{"a": "cut')], stop_reason="length"
    )
    provider = ScriptedProvider(Scenario(name="s", turns=[turn]))
    assert (await play(provider, [user("a")]))[-1].message.stop_reason == "length"


async def test_scripted_provider_honours_an_abort_before_and_while_streaming() -> None:
    controller = AbortController()
    controller.abort()
    provider = ScriptedProvider(
        Scenario(name="s", turns=[ScriptedTurn(text="x" * 50)]), chars_per_second=100
    )
    events = await play(provider, [user("a")], controller.signal)
    assert [e.type for e in events] == ["start", "error"]
    assert events[-1].message.stop_reason == "aborted"


async def test_scripted_provider_in_the_loop_runs_a_tool_scenario() -> None:
    turns = [
        ScriptedTurn(
            text="Checking.", tool_calls=[ScriptedToolCall(name="echo", arguments={"value": "x"})]
        ),
        ScriptedTurn(text="Done."),
    ]
    provider = ScriptedProvider(Scenario(name="s", turns=turns))
    log: list[str] = []
    run = await run_loop(provider, [make_tool(log=log)])  # type: ignore[arg-type]
    assert log == ["x"]
    assert [m.role for m in run.messages] == ["user", "assistant", "toolResult", "assistant"]
    assert run.messages[-1].text == "Done."


def test_fake_stream_is_importable() -> None:
    assert FakeStream().count == 0
