"""`apply_stream_event`: the one set of rules by which stream events build a message,
the stream builder and the session reader holding the same message at every step,
and the view fold showing the same text."""

from __future__ import annotations

import json

from workbench.agent import (
    AssistantMessage,
    AssistantMessageEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from workbench.agent.stream_apply import apply_delta, apply_stream_event
from workbench.providers.stream_builder import StreamBuilder
from workbench.sessions.codec import Decoder, encode
from workbench.view.fold import ViewState


def event(kind: str, index: int | None = None, delta: str | None = None, partial=None):  # type: ignore[no-untyped-def]
    return AssistantMessageEvent(type=kind, content_index=index, delta=delta, partial=partial)  # type: ignore[arg-type]


def a_stream() -> tuple[StreamBuilder, list[AssistantMessageEvent]]:
    """Thinking, text, then two tool calls whose argument deltas interleave (as
    OpenAI streams parallel calls), one of them not a JSON object."""
    b = StreamBuilder(Model(id="m", provider="p"))
    events = b.start() + b.thinking("hm") + b.thinking("m.") + b.text("Read") + b.text(" both.")
    first, opened = b.begin_tool_call("c1", "read_file")
    events += opened
    second, opened = b.begin_tool_call("c2", "list_dir")
    events += opened
    for index, delta in [(first, '{"pa'), (second, "[1,"), (first, 'th": "a"}'), (second, "2]")]:
        events += b.tool_call_delta(index, delta)
    events += b.done()
    return b, events


def test_the_builder_s_message_is_what_its_events_say() -> None:
    builder, events = a_stream()
    rebuilt = AssistantMessage()
    for e in events:
        apply_stream_event(rebuilt, e)
    assert (
        rebuilt.content
        == builder.message.content
        == [
            ThinkingContent(thinking="hmm."),
            TextContent(text="Read both."),
            ToolCall(
                id="c1", name="read_file", arguments={"path": "a"}, raw_arguments='{"path": "a"}'
            ),
            ToolCall(id="c2", name="list_dir", arguments={}, raw_arguments="[1,2]"),
        ]
    )


def test_a_start_opens_an_empty_block_padding_up_to_its_index() -> None:
    message = AssistantMessage()
    block = apply_stream_event(message, event("thinking_start", 2))
    assert block is message.content[2] == ThinkingContent(thinking="")
    assert message.content[:2] == [TextContent(text=""), TextContent(text="")]


def test_a_tool_call_opens_with_its_id_and_name_and_no_arguments_yet() -> None:
    # The provider's message may be further along than the event (a chunk that
    # carried the whole call): only the id and name are taken from it.
    ahead = AssistantMessage(
        content=[ToolCall(id="c1", name="read_file", arguments={"a": 1}, raw_arguments='{"a":1}')]
    )
    message = AssistantMessage()
    apply_stream_event(message, event("toolcall_start", 0, partial=ahead))
    assert message.content == [ToolCall(id="c1", name="read_file", raw_arguments="")]
    given = ToolCall(id="c9", name="write_file", raw_arguments="{}")
    apply_stream_event(message, event("toolcall_start", 0, partial=ahead), given)
    assert message.content == [ToolCall(id="c9", name="write_file", raw_arguments="")]
    apply_stream_event(message, event("toolcall_start", 1))  # nothing says which call
    assert message.content[1] == ToolCall(id="", name="", raw_arguments="")


def test_a_delta_extends_only_a_block_of_its_own_kind_at_its_index() -> None:
    message = AssistantMessage(content=[TextContent(text="a"), ThinkingContent(thinking="t")])
    assert apply_stream_event(message, event("text_delta", 1, "x")) is None
    assert apply_stream_event(message, event("thinking_delta", 0, "x")) is None
    assert apply_stream_event(message, event("text_delta", 5, "x")) is None
    assert apply_stream_event(message, event("text_delta", -1, "x")) is None
    assert apply_stream_event(message, event("text_delta", None, "x")) is None
    assert message.content == [TextContent(text="a"), ThinkingContent(thinking="t")]
    assert apply_stream_event(message, event("text_delta", 0, "b")) is message.content[0]
    assert apply_stream_event(message, event("thinking_delta", 1, None)) is message.content[1]
    assert message.content == [TextContent(text="ab"), ThinkingContent(thinking="t")]


def test_a_joined_run_of_deltas_applies_as_the_run_does_one_by_one() -> None:
    one_by_one = AssistantMessage(content=[ToolCall(id="c", name="n", raw_arguments="")])
    joined = one_by_one.model_copy(deep=True)
    pieces = ['{"k"', ": ", '"v"}']
    for piece in pieces:
        apply_stream_event(one_by_one, event("toolcall_delta", 0, piece))
    apply_delta(joined, "toolcall_delta", 0, "".join(pieces))
    assert joined == one_by_one
    assert one_by_one.content[0].raw_arguments == '{"k": "v"}'  # type: ignore[union-attr]


def test_a_call_s_end_parses_its_arguments_leniently_and_other_events_change_nothing() -> None:
    message = AssistantMessage(content=[ToolCall(id="c", name="n", raw_arguments='{"a": [1')])
    apply_stream_event(message, event("toolcall_end", 0))
    assert message.content[0].arguments == {}  # type: ignore[union-attr]
    message.content[0].raw_arguments = '{"a": [1]}'  # type: ignore[union-attr]
    apply_stream_event(message, event("toolcall_end", 0))
    assert message.content[0].arguments == {"a": [1]}  # type: ignore[union-attr]
    before = message.model_copy(deep=True)
    for kind in ("start", "text_end", "thinking_end", "done", "error"):
        assert apply_stream_event(message, event(kind, 0)) is None
    assert message == before


def test_builder_and_reader_hold_the_same_message_and_the_fold_shows_it() -> None:
    builder, events = a_stream()
    updates = [
        MessageUpdateEvent(message=builder.message, assistant_message_event=e)
        for e in events
        if e.type not in ("start", "done", "error")
    ]
    start = MessageStartEvent(message=AssistantMessage())
    decoder = Decoder()
    decoder.decode(json.loads(encode(1, 0.0, start)))
    state = ViewState()
    state.apply(start)
    expected = AssistantMessage()
    for n, update in enumerate(updates, 2):
        apply_stream_event(expected, update.assistant_message_event)
        read = decoder.decode(json.loads(encode(n, 0.0, update)))
        state.apply(update)
        assert read.message.content == expected.content, update.assistant_message_event.type
    assert expected.content == builder.message.content
    assert [c.raw for c in state.calls.values()] == ['{"path": "a"}', "[1,2]"]
    assert [b.text for b in state.streaming_item.blocks[:2]] == ["hmm.", "Read both."]  # type: ignore[union-attr]


def shown(state: ViewState) -> list[tuple[str, str | None, str | None]]:
    """The streamed message as the fold shows it: each block's kind and text (a call's
    id and the raw arguments its record shows)."""
    item = state.streaming_item
    assert item is not None
    return [
        (b.kind, b.tool_call_id, state.calls[b.tool_call_id].raw)  # type: ignore[index]
        if b.kind == "toolCall"
        else (b.kind, None, b.text)
        for b in item.blocks
    ]


def as_built(message: AssistantMessage) -> list[tuple[str, str | None, str | None]]:
    return [
        ("toolCall", b.id, b.raw_arguments)
        if isinstance(b, ToolCall)
        else ("thinking", None, b.thinking)
        if isinstance(b, ThinkingContent)
        else ("text", None, b.text)
        for b in message.content
    ]


def test_the_fold_shows_what_apply_stream_event_builds_after_every_event() -> None:
    builder, events = a_stream()
    # Deltas the rules ignore: to a block of another kind, and past the last block.
    stray = [
        event("text_delta", 0, "not thinking"),
        event("thinking_delta", 1, "not text"),
        event("toolcall_delta", 1, "not a call"),
        event("text_delta", 9, "nowhere"),
    ]
    stream = [e for e in events if e.type not in ("start", "done", "error")]
    stream[4:4] = stray  # after the thinking and text blocks opened
    updates = [
        MessageUpdateEvent(message=builder.message, assistant_message_event=e) for e in stream
    ]
    start = MessageStartEvent(message=AssistantMessage())
    one_by_one = ViewState()
    one_by_one.apply(start)
    expected = AssistantMessage()
    for n, update in enumerate(updates, 1):
        apply_stream_event(expected, update.assistant_message_event)
        one_by_one.apply(update)
        batched = ViewState()
        batched.apply_all([start, *updates[:n]])
        kind = update.assistant_message_event.type
        assert shown(one_by_one) == shown(batched) == as_built(expected), (n, kind)
    assert as_built(expected)[:2] == [("thinking", None, "hmm."), ("text", None, "Read both.")]


def test_a_recorded_call_that_started_whole_reads_back_once_not_twice() -> None:
    # A session written when one chunk carried a whole call holds the call's whole
    # argument string in its `toolcall_start` line; the deltas still follow.
    lines = [
        {"seq": 1, "ts": 0, "event": MessageStartEvent(message=AssistantMessage()).model_dump()},
        {
            "seq": 2,
            "ts": 0,
            "event": {
                "type": "message_update",
                "assistant_message_event": {"type": "toolcall_start", "content_index": 0},
            },
            "block": {"type": "toolCall", "id": "c1", "name": "n", "raw_arguments": '{"a":1}'},
        },
        {
            "seq": 3,
            "ts": 0,
            "event": {
                "type": "message_update",
                "assistant_message_event": {
                    "type": "toolcall_delta",
                    "content_index": 0,
                    "delta": '{"a":1}',
                },
            },
        },
    ]
    decoder = Decoder()
    read = [decoder.decode(line) for line in lines]
    assert read[-1].message.content == [ToolCall(id="c1", name="n", raw_arguments='{"a":1}')]
