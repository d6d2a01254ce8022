"""An empty model stream is an error that says so, and the hint after an empty response
knows the request's tool_choice (no "try --tool-choice auto" when it already was)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.chat_server import ChatServer, Reply, stream_reply
from tests.support.fixtures import collect
from workbench.providers.openai import OpenAIProvider

MakeProvider = Callable[..., OpenAIProvider]

pytest_plugins = ["tests.support.fixtures"]


async def test_done_without_a_chunk_is_an_error_not_an_empty_reply(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(stream_reply([]))  # no chunk at all, then [DONE]
    events = await collect(openai_provider())
    message = events[-1].message
    assert message is not None and message.stop_reason == "error"
    assert "without a single chunk" in (message.error_message or "")


@pytest.mark.parametrize(
    ("tool_choice", "says", "not_said"),
    [
        ("none", "try --tool-choice auto", "server's own log"),
        ("auto", "was auto; the server's own log says why", "try --tool-choice auto"),
        (None, "was left unset", "try --tool-choice auto"),
    ],
)
async def test_the_empty_response_hint_knows_the_tool_choice(
    chat_server: ChatServer,
    openai_provider: MakeProvider,
    tool_choice: str | None,
    says: str,
    not_said: str,
) -> None:
    chat_server.script(Reply(200, pieces=[]))
    provider = openai_provider(tool_choice=tool_choice)
    provider.sticky_tool_choice = True  # the forced choice is the one this request made
    events = await collect(provider)
    error = events[-1].message.error_message or ""
    assert error.startswith("Empty response") and says in error and not_said not in error
