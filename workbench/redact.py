"""The values of the keys the workbench knows, kept out of what it records and sends.

A command can print `$OPENAI_API_KEY` if the user passed it on (`--pass-env`), an
MCP server can echo its `Authorization` header: whatever a tool returns goes to the
model, the screen and the session file. A `Redactor` holds the secret values the
workbench was given (the provider's API key and headers, every MCP server's
headers and env, and the user's environment variables whose names say they are
secrets) and replaces each with `[REDACTED:NAME]`. The loop applies it to every
tool result and update (see `workbench.agent.result_limits`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "openai-api-key",
        "cookie",
        "set-cookie",
    }
)
"""HTTP headers (lower-case) that carry credentials: never recorded or shown, and their
values are cut out of error messages."""
MIN_LENGTH = 6
"""Shorter values are not redacted: they would match ordinary text."""
SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|PAT)(_|$)", re.I
)
"""Environment variable names whose values are treated as secrets: one `_`-separated
word of the name says so (`OPENAI_API_KEY`, `GH_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
`DB_PASSWORD`), so `SSH_AUTH_SOCK` or `GNOME_KEYRING_CONTROL` are not."""


class Redactor:
    """Replaces known secret values in text. Call it with a string."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        by_value: dict[str, str] = {}
        for name, value in secrets.items():
            if isinstance(value, str) and len(value) >= MIN_LENGTH:
                by_value.setdefault(value, name)
        # Longest first, so a secret that contains another is replaced whole.
        self._pairs = sorted(by_value.items(), key=lambda pair: -len(pair[0]))

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def __call__(self, text: str) -> str:
        for value, name in self._pairs:
            if value in text:
                text = text.replace(value, f"[REDACTED:{name}]")
        return text


def known_secrets(
    provider_settings: Any = None,
    mcp_servers: Iterable[Any] = (),
    environ: Mapping[str, str] = os.environ,
) -> dict[str, str]:
    """Name -> value of every secret the workbench was given or can see."""
    found = {name: value for name, value in environ.items() if SECRET_NAME.search(name)}
    if provider_settings is not None:
        key = getattr(provider_settings, "api_key", None)
        if key is not None:
            found["api_key"] = key.get_secret_value()
        for header, value in (getattr(provider_settings, "extra_headers", None) or {}).items():
            found[f"header {header}"] = value
            found.update(_bearer(f"header {header}", value))
    for server in mcp_servers:
        for header, value in server.headers.items():
            found[f"{server.name} header {header}"] = value
            found.update(_bearer(f"{server.name} header {header}", value))
        for name, value in server.env.items():
            found[f"{server.name} env {name}"] = value
    return found


def _bearer(name: str, value: str) -> dict[str, str]:
    """The token of an `Authorization: Bearer TOKEN` header, on its own too."""
    scheme, _, token = value.partition(" ")
    return {f"{name} token": token} if scheme and token else {}


def redactor_for(provider_settings: Any = None, mcp_servers: Iterable[Any] = ()) -> Redactor | None:
    """A `Redactor` for what this run knows, or None when there is nothing to redact."""
    redactor = Redactor(known_secrets(provider_settings, mcp_servers))
    return redactor if redactor else None
