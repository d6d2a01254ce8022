"""Fixtures for the proxy tests: the project's OpenAI-compatible test server."""

from tests.support.fixtures import chat_server  # noqa: F401 - a fixture, found by name
