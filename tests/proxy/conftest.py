"""Fixtures for the proxy tests: the project's OpenAI-compatible test server, and real
clients installed on first use."""

from tests.support.clients import (  # noqa: F401 - fixtures, found by name
    claude_code,
    codex,
    gemini_cli,
    opencode,
    pi,
)
from tests.support.fixtures import chat_server  # noqa: F401 - a fixture, found by name
