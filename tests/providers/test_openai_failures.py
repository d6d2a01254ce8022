"""Failures never raise: every one ends the stream with a readable error, partial content kept."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import anyio
import pytest

from tests.support.chat_server import (
    ChatServer,
    Drop,
    Pause,
    Reply,
    chunk,
    finish,
    role_chunk,
    sse,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from tests.support.fixtures import Recorder, collect
from workbench.agent import AbortController, AssistantMessage, AssistantMessageEvent, UserMessage
from workbench.agent.config import LlmContext, StreamOptions
from workbench.providers.openai import OpenAIProvider
from workbench.providers.settings import OpenAISettings

MakeProvider = Callable[..., OpenAIProvider]

pytest_plugins = ["tests.support.fixtures"]


def final_of(events: list[AssistantMessageEvent]) -> AssistantMessage:
    assert events[-1].type in ("done", "error")
    assert sum(e.type in ("done", "error") for e in events) == 1
    message = events[-1].message
    assert message is not None
    return message


# -- HTTP errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens",
                    "type": "invalid_request_error",
                }
            },
            "Bad request (HTTP 400) from {url}/chat/completions: "
            "This model's maximum context length",
        ),
        (401, {"error": "invalid api key"}, "Authentication failed (HTTP 401)"),
        (
            404,
            {"object": "error", "message": "The model `nope` does not exist."},
            "Check --base-url",
        ),
        (
            500,
            "upstream exploded",
            "Server error (HTTP 500) from {url}/chat/completions: upstream exploded",
        ),
    ],
)
async def test_http_errors_carry_the_status_and_the_servers_own_message(
    chat_server: ChatServer, openai_provider: MakeProvider, status: int, body: object, expected: str
) -> None:
    chat_server.script(Reply.error(status, body))
    recorder = Recorder()
    message = final_of(await collect(openai_provider(recorder=recorder)))
    assert message.stop_reason == "error"
    assert expected.format(url=chat_server.url) in (message.error_message or "")
    response = recorder.of_type("provider_response")[0]
    assert response.status == status and response.error == message.error_message
    assert len(chat_server.requests) == 1  # max_retries=0: no retry


async def test_rate_limit_is_retried_by_the_sdk_then_reported(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    limited = Reply.error(
        429,
        {"error": {"message": "Rate limit reached for requests", "type": "requests"}},
        headers={"retry-after-ms": "10"},
    )
    chat_server.script(limited, limited, limited)
    message = final_of(await collect(openai_provider(max_retries=2)))
    assert len(chat_server.requests) == 3
    assert [r.headers["x-stainless-retry-count"] for r in chat_server.requests] == ["0", "1", "2"]
    assert message.error_message == (
        f"Rate limited (HTTP 429) from {chat_server.url}/chat/completions: "
        "Rate limit reached for requests (still failing after 2 retries)"
    )


async def test_rate_limit_then_success(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        Reply.error(429, {"error": {"message": "slow down"}}, headers={"retry-after-ms": "10"}),
        stream_reply([*text_chunks("made it", 2), finish()]),
    )
    recorder = Recorder()
    message = final_of(await collect(openai_provider(max_retries=1, recorder=recorder)))
    assert (message.stop_reason, message.text) == ("stop", "made it")
    assert [e.type for e in recorder.events] == ["provider_request", "provider_response"]
    assert recorder.events[1].status == 200


# -- the connection ------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_connection_refused() -> None:
    base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    provider = OpenAIProvider(OpenAISettings(base_url=base_url, model="m", max_retries=0))
    recorder = Recorder()
    provider.publish = recorder.publish
    message = final_of(await collect(provider))
    await provider.aclose()
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert message.error_message.startswith(f"Could not connect to {base_url}/chat/completions: ")
    assert "Is the server running?" in message.error_message
    assert recorder.of_type("provider_response")[0].status is None


async def test_no_response_within_the_timeout(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(Reply(delay=2.0, pieces=[]))
    started = time.monotonic()
    message = final_of(await collect(openai_provider(timeout=0.2)))
    assert time.monotonic() - started < 1.5
    assert message.error_message == (
        f"Request timed out: no response from {chat_server.url}/chat/completions within 0.2s"
    )


async def test_stall_mid_stream_times_out_keeping_partial_text(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply(text_chunks("half an ans", 2), done=False, then=[Pause(2.0)]))
    message = final_of(await collect(openai_provider(timeout=0.2)))
    assert (message.stop_reason, message.text) == ("error", "half an ans")
    assert message.error_message is not None and message.error_message.startswith(
        "Timed out mid-stream"
    )


async def test_dropped_connection_keeps_partial_content(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chunks = [
        role_chunk(),
        *text_chunks("Partial ", 2),
        *tool_call_chunks(0, "call_1", "f", '{"a": "b', 2),
    ]
    chat_server.script(stream_reply(chunks, done=False, then=[Drop()]))
    events = await collect(openai_provider())
    message = final_of(events)
    assert message.stop_reason == "error"
    assert message.text == "Partial "
    assert message.tool_calls[0].raw_arguments == '{"a": "b'
    assert message.error_message is not None
    assert message.error_message.startswith(
        "Connection lost mid-stream after 6 chunk(s): RemoteProtocolError"
    )
    assert [e.type for e in events].count("toolcall_end") == 1  # open blocks are closed


async def test_body_ending_without_finish_or_done_is_an_error(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply(text_chunks("cut", 1), done=False))
    message = final_of(await collect(openai_provider()))
    assert (message.stop_reason, message.text) == ("error", "cut")
    assert "ended early" in (message.error_message or "")


async def test_malformed_json_chunk(chat_server: ChatServer, openai_provider: MakeProvider) -> None:
    chat_server.script(
        stream_reply([*text_chunks("before", 1), '{"choices": [{"delta": {"content": ', finish()])
    )
    message = final_of(await collect(openai_provider()))
    assert (message.stop_reason, message.text) == ("error", "before")
    assert (message.error_message or "").startswith("Malformed chunk from the server (invalid JSON")


async def test_error_object_mid_stream(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply([*text_chunks("so far", 1), {"error": {"message": "CUDA out of memory"}}])
    )
    message = final_of(await collect(openai_provider()))
    assert (message.stop_reason, message.text) == ("error", "so far")
    assert message.error_message == "The server reported an error mid-stream: CUDA out of memory"


async def test_a_failing_publish_does_not_break_the_stream(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    async def broken(_: object) -> None:
        raise RuntimeError("view crashed")

    chat_server.script(stream_reply([*text_chunks("fine", 1), finish()]))
    provider = openai_provider()
    provider.publish = broken
    message = final_of(await collect(provider))
    assert (message.stop_reason, message.text) == ("stop", "fine")


# -- abort ---------------------------------------------------------------------------


async def test_abort_mid_stream_closes_the_response_promptly(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(
            [role_chunk(), *text_chunks("Once upon a", [4, 9])],
            done=False,
            then=[Pause(5.0), sse(chunk({"content": " never"}))],
        )
    )
    recorder = Recorder()
    provider = openai_provider(recorder=recorder)
    controller = AbortController()
    context = LlmContext("", [UserMessage(content="story")], [])
    events: list[AssistantMessageEvent] = []
    aborted_at = 0.0
    async for event in provider(provider.model, context, StreamOptions(controller.signal)):
        events.append(event)
        if event.type == "text_delta" and event.delta == " a":
            aborted_at = time.monotonic()
            controller.abort("user pressed Esc")
    finished_at = time.monotonic()
    message = final_of(events)
    assert (message.stop_reason, message.error_message, message.text) == (
        "aborted",
        "Request was aborted",
        "Once upon a",
    )
    assert finished_at - aborted_at < 0.3
    request = chat_server.requests[0]
    assert await anyio.to_thread.run_sync(request.wait_disconnected, 2.0)
    assert request.disconnected_at is not None and not request.completed
    response = recorder.of_type("provider_response")[0]
    assert response.error == "Request was aborted" and response.status == 200


async def test_abort_while_waiting_for_the_first_byte(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(Reply(delay=5.0, pieces=[]))
    provider = openai_provider()
    controller = AbortController()
    context = LlmContext("", [UserMessage(content="hi")], [])
    events: list[AssistantMessageEvent] = []

    async def consume() -> None:
        async for event in provider(provider.model, context, StreamOptions(controller.signal)):
            events.append(event)

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        while not chat_server.requests:
            await anyio.sleep(0.01)
        controller.abort()
    assert time.monotonic() - started < 1.0
    assert final_of(events).stop_reason == "aborted"
    assert await anyio.to_thread.run_sync(chat_server.requests[0].wait_disconnected, 2.0)


async def test_already_aborted_sends_nothing(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    controller = AbortController()
    controller.abort()
    recorder = Recorder()
    message = final_of(await collect(openai_provider(recorder=recorder), controller=controller))
    assert message.stop_reason == "aborted"
    assert chat_server.requests == [] and recorder.events == []


async def test_an_impossible_request_fails_before_sending(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    recorder = Recorder()
    events = await collect(openai_provider(recorder=recorder, tool_choice="write_file"))
    message = final_of(events)
    assert [e.type for e in events] == ["start", "error"]
    assert (
        message.error_message
        == "Invalid request: tool choice 'write_file' needs tools, and none are offered"
    )
    assert chat_server.requests == [] and recorder.events == []


async def test_a_key_echoed_by_the_server_is_redacted(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(Reply.error(401, {"error": {"message": "Invalid key sk-echoed-secret-123"}}))
    recorder = Recorder()
    message = final_of(
        await collect(openai_provider(recorder=recorder, api_key="sk-echoed-secret-123"))
    )
    assert message.error_message is not None and "Invalid key ***" in message.error_message
    assert "sk-echoed-secret-123" not in str([e.model_dump() for e in recorder.events])


async def test_abort_while_blocked_on_the_next_chunk(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    """The abort comes from elsewhere (a key press) while the provider awaits the socket."""
    chat_server.script(stream_reply(text_chunks("slow start", 2), done=False, then=[Pause(5.0)]))
    provider = openai_provider()
    controller = AbortController()
    context = LlmContext("", [UserMessage(content="hi")], [])
    events: list[AssistantMessageEvent] = []

    async def consume() -> None:
        async for event in provider(provider.model, context, StreamOptions(controller.signal)):
            events.append(event)

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        with anyio.fail_after(2):
            while sum(e.type == "text_delta" for e in events) < 2:
                await anyio.sleep(0.005)
        await anyio.sleep(0.05)  # the provider is now parked on the socket read
        aborted_at = time.monotonic()
        controller.abort()
    assert time.monotonic() - aborted_at < 0.3
    message = final_of(events)
    assert (message.stop_reason, message.text) == ("aborted", "slow start")
    assert await anyio.to_thread.run_sync(chat_server.requests[0].wait_disconnected, 2.0)
