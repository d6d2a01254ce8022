"""The provider over the wire: the real `openai` SDK against the local chat server."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.support.chat_server import (
    ChatServer,
    Reply,
    chunk,
    completion,
    finish,
    interleave,
    reasoning_chunks,
    role_chunk,
    stream_reply,
    text_chunks,
    tool_call_chunks,
    usage_chunk,
)
from tests.support.fixtures import Recorder, collect
from workbench.agent import AgentTool, AgentToolResult, UserMessage
from workbench.bus_events import ProviderRequestEvent, ProviderResponseEvent, parse_event
from workbench.providers.openai import OpenAIProvider

MakeProvider = Callable[..., OpenAIProvider]

pytest_plugins = ["tests.support.fixtures"]


async def test_text_stream_events_request_and_wire_telemetry(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(
            [role_chunk(), *text_chunks("Hello there", 3), finish("stop"), usage_chunk(12, 3)],
        )
    )
    recorder = Recorder()
    provider = openai_provider(recorder=recorder)
    events = await collect(provider, [UserMessage(content="hi")], system_prompt="Be brief.")

    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    final = events[-1].message
    assert final is not None
    assert (final.text, final.stop_reason, final.provider, final.model) == (
        "Hello there",
        "stop",
        "openai",
        "test-model",
    )
    assert (final.usage.input, final.usage.output, final.usage.total_tokens) == (12, 3, 15)

    (received,) = chat_server.requests
    assert received.json == {
        "model": "test-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    request, response = recorder.events
    assert isinstance(request, ProviderRequestEvent) and isinstance(response, ProviderResponseEvent)
    assert request.body == received.json  # the published body is exactly what went out
    assert request.url == f"{chat_server.url}/chat/completions"
    assert response.request_id == request.request_id
    assert (response.status, response.server_model, response.finish_reason) == (
        200,
        "test-model",
        "stop",
    )
    assert response.usage is not None and response.usage.total_tokens == 15
    assert response.ttft_ms is not None and 0 < response.ttft_ms <= response.total_ms
    assert response.error is None and response.chunks is None
    assert parse_event(response.model_dump_json()) == response  # the bus can carry it


@pytest.mark.parametrize("cuts", [1, 2, 3, 7])
async def test_bytes_cut_anywhere_even_inside_utf8_characters(
    chat_server: ChatServer, openai_provider: MakeProvider, cuts: int
) -> None:
    text = "Grüße, 世界! 😀 ok"
    args = '{"path": "données/ファイル😀.txt", "n": 1}'
    chunks = [
        *text_chunks(text, [2, 5, 9]),
        *tool_call_chunks(0, "call_1", "read_file", args, [3, 11, 20, 21]),
        finish("tool_calls"),
    ]
    reply = stream_reply(chunks, cuts=cuts, gap=0.0005 if cuts > 2 else 0.0)
    assert any(
        not _decodes(p) for p in reply.pieces if isinstance(p, bytes)
    )  # really cut mid-character
    chat_server.script(reply)
    events = await collect(openai_provider())
    final = events[-1].message
    assert final is not None and final.stop_reason == "toolUse"
    assert final.text == text
    (call,) = final.tool_calls
    assert (call.id, call.name, call.raw_arguments) == ("call_1", "read_file", args)
    assert call.arguments == {"path": "données/ファイル😀.txt", "n": 1}
    deltas = "".join(e.delta or "" for e in events if e.type == "toolcall_delta")
    assert deltas == args


async def test_interleaved_tool_calls_with_arguments_cut_at_odd_points(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    a = tool_call_chunks(0, "call_a", "read_file", '{"path": "a.txt"}', [1, 2, 7, 15])
    b = tool_call_chunks(1, "call_b", "grep", '{"pattern": "\\"x\\"", "i": true}', [4, 5, 19])
    chat_server.script(stream_reply([role_chunk(), *interleave(a, b), finish("tool_calls")]))
    events = await collect(openai_provider())
    final = events[-1].message
    assert final is not None
    assert [(c.id, c.raw_arguments) for c in final.tool_calls] == [
        ("call_a", '{"path": "a.txt"}'),
        ("call_b", '{"pattern": "\\"x\\"", "i": true}'),
    ]
    starts = [e.content_index for e in events if e.type == "toolcall_start"]
    ends = [e.content_index for e in events if e.type == "toolcall_end"]
    assert starts == [0, 1] and sorted(ends) == [0, 1]
    # deltas really did interleave: call b got a piece before call a was complete
    order = [e.content_index for e in events if e.type == "toolcall_delta"]
    assert order.index(1) < len(order) - 1 - order[::-1].index(0)


async def test_reasoning_ollama_style_then_text(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(
            [*reasoning_chunks("Let me think.", 2, "reasoning"), *text_chunks("42", 1), finish()]
        )
    )
    events = await collect(openai_provider())
    final = events[-1].message
    assert final is not None
    assert [c.type for c in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "Let me think."  # type: ignore[union-attr]


async def test_no_usage_chunk_is_fine(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply([*text_chunks("ok", 1), finish("stop")]))
    recorder = Recorder()
    events = await collect(openai_provider(recorder=recorder, include_usage=False))
    assert events[-1].type == "done"
    assert "stream_options" not in chat_server.requests[0].json
    assert recorder.of_type("provider_response")[0].usage is None


async def test_options_tools_and_extra_body_reach_the_server(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    from pydantic import BaseModel

    class Params(BaseModel):
        path: str

    async def run(*_: object) -> AgentToolResult:
        return AgentToolResult.text("")

    tool = AgentTool("read_file", "Read", "Read a file.", Params, run)
    chat_server.script(stream_reply([*text_chunks("ok", 1), finish()]))
    recorder = Recorder()
    provider = openai_provider(
        recorder=recorder,
        temperature=0.1,
        max_tokens=256,
        tool_choice="read_file",
        parallel_tool_calls=False,
        extra_body={"keep_alive": "5m", "options": {"num_ctx": 8192}},
    )
    await collect(provider, tools=[tool])
    body = chat_server.requests[0].json
    assert body["temperature"] == 0.1 and body["max_tokens"] == 256
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
    assert body["parallel_tool_calls"] is False
    assert body["keep_alive"] == "5m" and body["options"] == {"num_ctx": 8192}
    assert body["tools"][0]["function"]["parameters"]["properties"]["path"]["type"] == "string"
    assert recorder.of_type("provider_request")[0].body == body


async def test_keys_and_auth_headers_never_reach_events(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply([*text_chunks("ok", 1), finish()]))
    recorder = Recorder()
    provider = openai_provider(
        recorder=recorder,
        api_key="sk-very-secret",
        extra_headers={"X-Title": "workbench", "api-key": "gateway-secret"},
    )
    events = await collect(provider)
    headers = chat_server.requests[0].headers
    assert headers["authorization"] == "Bearer sk-very-secret"
    assert headers["api-key"] == "gateway-secret" and headers["x-title"] == "workbench"
    request = recorder.of_type("provider_request")[0]
    assert request.headers == {"X-Title": "workbench"}
    dumped = json.dumps([e.model_dump(mode="json") for e in [*recorder.events, *events]])
    assert "sk-very-secret" not in dumped and "gateway-secret" not in dumped
    assert "sk-very-secret" not in repr(provider.settings)


async def test_no_key_sends_a_placeholder(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply([*text_chunks("ok", 1), finish()]))
    await collect(openai_provider())
    assert chat_server.requests[0].headers["authorization"] == "Bearer no-key"


async def test_capture_chunks_records_raw_data_lines(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply([chunk({"content": "ü"}), finish()], cuts=3))
    recorder = Recorder()
    await collect(openai_provider(recorder=recorder, capture_chunks=True))
    chunks = recorder.of_type("provider_response")[0].chunks
    assert chunks is not None and chunks[-1] == "[DONE]"
    assert json.loads(chunks[0])["choices"][0]["delta"] == {"content": "ü"}
    assert len(chunks) == 3


async def test_server_that_ignores_stream_true(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    call = {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    chat_server.script(
        Reply.json(completion("Done.", tool_calls=[call], finish_reason="tool_calls"))
    )
    events = await collect(openai_provider())
    final = events[-1].message
    assert final is not None and final.stop_reason == "toolUse"
    assert final.text == "Done." and final.tool_calls[0].raw_arguments == '{"a": 1}'


async def test_html_page_is_a_clear_base_url_error(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(Reply(200, body=b"<html>LM Studio</html>", content_type="text/html"))
    events = await collect(openai_provider())
    final = events[-1].message
    assert final is not None and final.stop_reason == "error"
    assert "web page" in (final.error_message or "") and "base URL" in (final.error_message or "")


async def test_request_model_follows_the_loop_model(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    from workbench.agent import Model
    from workbench.agent.config import LlmContext, StreamOptions

    chat_server.script(
        stream_reply(
            [*text_chunks("ok", 1), finish()],
        )
    )
    provider = openai_provider()
    context = LlmContext("", [UserMessage(content="hi")], [])
    async for _ in provider(Model(id="other-model", provider="openai"), context, StreamOptions()):
        pass
    assert chat_server.requests[0].json["model"] == "other-model"
    assert provider.model.id == "test-model" and provider.model.base_url == chat_server.url


def _decodes(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
