"""Fixtures for the proxy tests: the project's OpenAI-compatible test server, and real
clients installed on first use."""

from tests.support.clients import claude_code, codex  # noqa: F401 - fixtures, found by name
from tests.support.fixtures import chat_server  # noqa: F401 - a fixture, found by name
