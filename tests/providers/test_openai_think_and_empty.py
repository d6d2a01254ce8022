"""Thinking inside `content` (`<think>...</think>`), empty 200 responses, aborted requests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.chat_server import ChatServer, Pause, Reply, finish, stream_reply, text_chunks
from tests.support.fixtures import Recorder, collect
from workbench.agent import AbortController, AssistantMessage, UserMessage
from workbench.agent.config import LlmContext, StreamOptions
from workbench.providers.openai import OpenAIProvider
from workbench.providers.openai_stream import ThinkSplitter

MakeProvider = Callable[..., OpenAIProvider]

pytest_plugins = ["tests.support.fixtures"]

REPLY = "<think>\nThe user greets me.\n</think>\n\nHello there."


def split_at(text: str, *cuts: int) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def joined(pieces: list[tuple[str, str]]) -> dict[str, str]:
    out = {"thinking": "", "text": ""}
    for kind, text in pieces:
        out[kind] += text
    return out


@pytest.mark.parametrize("cut", range(1, len(REPLY)))
def test_a_think_block_is_split_out_wherever_the_chunks_are_cut(cut: int) -> None:
    splitter = ThinkSplitter()
    pieces = [p for part in split_at(REPLY, cut) for p in splitter.feed(part)] + splitter.flush()
    assert joined(pieces) == {"thinking": "\nThe user greets me.\n", "text": "Hello there."}


def test_one_character_at_a_time() -> None:
    splitter = ThinkSplitter()
    pieces = [p for ch in REPLY for p in splitter.feed(ch)] + splitter.flush()
    assert joined(pieces) == {"thinking": "\nThe user greets me.\n", "text": "Hello there."}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Use a <think> tag to reason.", {"thinking": "", "text": "Use a <think> tag to reason."}),
        ("<thin", {"thinking": "", "text": "<thin"}),  # ended before saying what it was
        ("<think>never closed", {"thinking": "never closed", "text": ""}),
        ("<think>a</think>b <think>c</think>", {"thinking": "a", "text": "b <think>c</think>"}),
    ],
)
def test_only_a_leading_think_block_is_thinking(content: str, expected: dict[str, str]) -> None:
    splitter = ThinkSplitter()
    assert joined(splitter.feed(content) + splitter.flush()) == expected


async def test_streamed_think_tags_become_a_thinking_block(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply([*text_chunks(REPLY, 9), finish("stop")], cuts=5))
    provider = openai_provider()
    events = await collect(provider)
    message = events[-1].message
    assert isinstance(message, AssistantMessage)
    assert [c.type for c in message.content] == ["thinking", "text"]
    assert message.content[0].thinking.strip() == "The user greets me."  # type: ignore[union-attr]
    assert message.text == "Hello there."
    assert any(e.type == "thinking_delta" for e in events)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, pieces=[]),  # an event stream with nothing in it
        Reply(200, body=b"", content_type="application/json"),
    ],
)
async def test_an_empty_200_says_what_happened_and_why(
    chat_server: ChatServer, openai_provider: MakeProvider, reply: Reply
) -> None:
    chat_server.script(reply)
    recorder = Recorder()
    provider = openai_provider(recorder=recorder)
    events = await collect(provider)
    message = events[-1].message
    assert message is not None and message.stop_reason == "error"
    error = message.error_message or ""
    assert error.startswith("Empty response")
    assert "tool_choice" in error and "llama.cpp" in error
    assert "connection may have been cut" not in error
    assert recorder.of_type("provider_response")[0].status == 200


async def test_an_aborted_request_is_marked_aborted(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply(text_chunks("Once upon", 2), done=False, then=[Pause(5.0)]))
    recorder = Recorder()
    provider = openai_provider(recorder=recorder)
    controller = AbortController()
    context = LlmContext("", [UserMessage(content="story")], [])
    async for event in provider(provider.model, context, StreamOptions(controller.signal)):
        if event.type == "text_delta":
            controller.abort("ctrl+c")
    response = recorder.of_type("provider_response")[0]
    assert response.aborted and response.status == 200
