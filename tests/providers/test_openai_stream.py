"""The chunk reader and SSE decoder on their own: server quirks, without a network."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.chat_server import (
    chunk,
    finish,
    interleave,
    reasoning_chunks,
    text_chunks,
    tool_call_chunks,
    usage_chunk,
)
from workbench.agent import Model, ToolCall
from workbench.providers.openai_stream import (
    ChunkReader,
    StreamError,
    error_text,
    usage_from,
)
from workbench.providers.stream_builder import StreamBuilder
from workbench.sse import SSEDecoder


def read(chunks: list[dict[str, Any]], *, done: bool = True) -> tuple[ChunkReader, list[Any]]:
    reader = ChunkReader(StreamBuilder(Model(id="m", provider="openai")))
    events = []
    for c in chunks:
        events += reader.feed_data(json.dumps(c))
    if done:
        events += reader.feed_data("[DONE]")
    events += reader.finish()
    return reader, events


def test_sse_decoder_handles_comments_multiline_data_and_event_names() -> None:
    d = SSEDecoder()
    lines = [": keep-alive", "event: error", 'data: {"a":', "data:1}", "", "", "data: [DONE]"]
    out = [r for line in lines if (r := d.feed(line)) is not None]
    assert out == [("error", '{"a":\n1}')]
    assert d.flush() == (None, "[DONE]")
    assert d.flush() is None


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_become_thinking(field: str) -> None:
    reader, events = read(
        reasoning_chunks("think hard", 3, field) + text_chunks("answer", 2) + [finish()]
    )
    message = reader.builder.message
    assert [c.type for c in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "think hard"  # type: ignore[union-attr]
    assert [e.type for e in events][:2] == ["thinking_start", "thinking_delta"]


def test_duplicate_reasoning_fields_are_not_doubled() -> None:
    _, events = read([chunk({"reasoning_content": "x", "reasoning": "x"}), finish()])
    assert [e.delta for e in events if e.type == "thinking_delta"] == ["x"]


def test_interleaved_calls_keep_their_own_arguments() -> None:
    a = tool_call_chunks(0, "call_a", "read_file", '{"path": "ä.txt"}', pieces=4)
    b = tool_call_chunks(1, "call_b", "list_dir", '{"dir": "."}', pieces=3)
    reader, events = read(interleave(a, b) + [finish("tool_calls")])
    calls = reader.builder.message.tool_calls
    assert [(c.id, c.name, c.raw_arguments, c.arguments) for c in calls] == [
        ("call_a", "read_file", '{"path": "ä.txt"}', {"path": "ä.txt"}),
        ("call_b", "list_dir", '{"dir": "."}', {"dir": "."}),
    ]
    assert reader.builder.message.stop_reason == "toolUse"
    assert [e.type for e in events].count("toolcall_end") == 2


def test_calls_without_index_and_with_late_id() -> None:
    chunks = [
        chunk({"tool_calls": [{"function": {"name": "read_file", "arguments": '{"pa'}}]}),
        chunk({"tool_calls": [{"id": "call_late", "function": {"arguments": 'th": 1}'}}]}),
    ]
    reader, _ = read(chunks + [finish("tool_calls")])
    (call,) = reader.builder.message.tool_calls
    assert (call.id, call.raw_arguments) == ("call_late", '{"path": 1}')


def test_new_id_on_a_reused_index_starts_a_new_call_and_generated_ids() -> None:
    chunks = [
        chunk(
            {"tool_calls": [{"index": 0, "id": "x", "function": {"name": "a", "arguments": "{}"}}]}
        ),
        chunk(
            {"tool_calls": [{"index": 0, "id": "y", "function": {"name": "b", "arguments": "{}"}}]}
        ),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "c", "arguments": {"k": 1}}}]}),
    ]
    reader, _ = read(chunks + [finish("tool_calls")])
    calls = reader.builder.message.tool_calls
    assert [c.name for c in calls] == ["a", "b", "c"]
    assert calls[2].id.startswith("call_") and calls[2].raw_arguments == '{"k": 1}'


def test_name_in_pieces_and_repeated_name() -> None:
    chunks = [
        chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "file", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file"}}]}),
    ]
    reader, _ = read(chunks + [finish("tool_calls")])
    assert [c.name for c in reader.builder.message.tool_calls] == ["read_file"]


@pytest.mark.parametrize(
    ("reason", "stop", "error"),
    [
        ("stop", "stop", None),
        ("length", "length", None),
        ("tool_calls", "toolUse", None),
        ("content_filter", "error", "content filter"),
        ("abort", "error", "finish_reason='abort'"),
        ("something_new", "stop", None),
    ],
)
def test_finish_reasons_are_mapped(reason: str, stop: str, error: str | None) -> None:
    reader, events = read(text_chunks("hi", 1) + [finish(reason)])
    message = reader.builder.message
    assert message.stop_reason == stop
    assert events[-1].type == ("error" if error else "done")
    if error:
        assert error in (message.error_message or "")
        assert message.text == "hi"  # partial content kept


def test_stop_after_tool_calls_means_tool_use() -> None:
    reader, _ = read(tool_call_chunks(0, "c", "f", "{}", 1) + [finish("stop")])
    assert reader.builder.message.stop_reason == "toolUse"


def test_usage_last_chunk_wins_and_missing_usage_is_fine() -> None:
    reader, _ = read(text_chunks("hi", 1) + [finish(), usage_chunk(100, 7, cached=40)])
    assert reader.usage is not None
    assert reader.builder.message.usage.model_dump() == {
        "input": 60,
        "output": 7,
        "cache_read": 40,
        "cache_write": 0,
        "total_tokens": 107,
    }
    reader, _ = read(text_chunks("hi", 1) + [finish()])
    assert reader.usage is None and reader.builder.message.usage.total_tokens == 0
    assert (
        usage_from({"prompt_tokens": 9, "completion_tokens": 1, "prompt_cache_hit_tokens": 4}).input
        == 5
    )


def test_a_stream_without_finish_reason_or_done_was_cut() -> None:
    with pytest.raises(StreamError, match="ended early"):
        read(text_chunks("partial", 2), done=False)
    reader, events = read(text_chunks("ok", 1), done=True)  # [DONE] alone is enough
    assert events[-1].type == "done" and reader.builder.message.text == "ok"
    reader, events = read(text_chunks("ok", 1) + [finish()], done=False)  # so is a finish reason
    assert events[-1].type == "done"


def test_malformed_and_error_chunks_raise_readable_errors() -> None:
    reader = ChunkReader(StreamBuilder(Model(id="m")))
    with pytest.raises(StreamError, match=r"Malformed chunk .*invalid JSON.*\{\"choices\": \[\{"):
        reader.feed_data('{"choices": [{')
    with pytest.raises(StreamError, match="mid-stream: model crashed"):
        reader.feed_data('{"error": {"message": "model crashed", "code": 500}}')
    with pytest.raises(StreamError, match="not an object"):
        reader.feed_data("[1, 2]")


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"error": {"message": "bad key", "type": "invalid_request_error"}}, "bad key"),
        ({"error": "model 'x' not found"}, "model 'x' not found"),
        ({"object": "error", "message": "context too long", "code": 400}, "context too long"),
        ({"detail": [{"msg": "field required"}]}, "field required"),
        ("plain text failure\n", "plain text failure"),
        ({"weird": 1}, '{"weird": 1}'),
    ],
)
def test_error_text_reads_every_server_shape(body: Any, text: str) -> None:
    assert error_text(body) == text


def test_tool_call_raw_arguments_are_kept_even_when_invalid() -> None:
    reader, _ = read(tool_call_chunks(0, "c", "f", '{"a": 1', 2) + [finish("length")])
    (call,) = reader.builder.message.tool_calls
    assert isinstance(call, ToolCall)
    assert (call.raw_arguments, call.arguments) == ('{"a": 1', {})
    assert reader.builder.message.stop_reason == "length"
