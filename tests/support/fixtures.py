"""Pytest fixtures and helpers around `ChatServer`; import the ones a module needs.

from tests.support.fixtures import chat_server, openai_provider  # noqa: F401

async def test_x(chat_server, openai_provider):
    chat_server.script(stream_reply(text_chunks("hi") + [finish()]))
    provider = openai_provider(temperature=0)   # closed after the test
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from tests.support.chat_server import ChatServer
from workbench.agent import AbortController, AssistantMessageEvent, Message, UserMessage
from workbench.agent.config import LlmContext, StreamOptions
from workbench.agent.tool import AgentTool
from workbench.providers.openai import OpenAIProvider
from workbench.providers.settings import OpenAISettings


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture
async def openai_provider(chat_server: ChatServer) -> AsyncIterator[Callable[..., OpenAIProvider]]:
    """A factory of providers pointed at `chat_server`; each is closed after the test."""
    made: list[OpenAIProvider] = []

    def make(**kwargs: Any) -> OpenAIProvider:
        made.append(make_provider(chat_server, **kwargs))
        return made[-1]

    yield make
    for provider in made:
        await provider.aclose()


class Recorder:
    """Collects published wire events (pass `recorder.publish` to the provider)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def publish(self, event: Any) -> None:
        self.events.append(event)

    def of_type(self, type_: str) -> list[Any]:
        return [e for e in self.events if e.type == type_]


def make_provider(
    server: ChatServer,
    *,
    recorder: Recorder | None = None,
    capture_chunks: bool = False,
    **settings: Any,
) -> OpenAIProvider:
    """A provider pointed at `server`, without retries unless asked for."""
    settings.setdefault("max_retries", 0)
    settings.setdefault("model", "test-model")
    return OpenAIProvider(
        OpenAISettings(base_url=server.url, **settings),
        publish=recorder.publish if recorder else None,
        capture_chunks=capture_chunks,
    )


async def collect(
    provider: OpenAIProvider,
    messages: list[Message] | None = None,
    *,
    system_prompt: str = "",
    tools: list[AgentTool] | None = None,
    controller: AbortController | None = None,
) -> list[AssistantMessageEvent]:
    """Run the stream function once and return all its events."""
    context = LlmContext(system_prompt, messages or [UserMessage(content="hi")], tools or [])
    signal = controller.signal if controller else None
    events: list[AssistantMessageEvent] = []
    stream: AsyncIterator[AssistantMessageEvent] = provider(
        provider.model, context, StreamOptions(signal)
    )
    async for event in stream:
        events.append(event)
    return events
