"""Where OAuth tokens of HTTP MCP servers are kept: one file per server URL, readable by
its owner only, under the user's state directory, never in a session or config file.

    <user state dir>/agent-workbench/mcp-tokens/<hash of the server URL>.json
    (on Linux $XDG_STATE_HOME, default ~/.local/state)

Each file holds the server's URL, the client the authorization server registered for the
workbench (its client id and redirect URI) and the tokens it issued. The directory is
created 0700 and each file written 0600, whole (a new file renamed over the old), so a
reader never sees half a token and another user never sees any.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


def tokens_dir() -> Path:
    """`mcp-tokens` in the user's state directory for the workbench (on Linux
    `$XDG_STATE_HOME/agent-workbench`, default `~/.local/state/agent-workbench`)."""
    from platformdirs import user_state_path

    return user_state_path("agent-workbench") / "mcp-tokens"


class TokenFile:
    """The SDK's `TokenStorage` for one server, in a file of its own.

    Args:
        server_url: the MCP endpoint the tokens are for.
        directory: where the file lives (default `tokens_dir()`).
    """

    def __init__(self, server_url: str, directory: Path | None = None) -> None:
        self.server_url = server_url
        self.directory = directory or tokens_dir()
        digest = hashlib.sha256(server_url.encode()).hexdigest()[:32]
        self.path = self.directory / f"{digest}.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("server_url") != self.server_url:
            return {}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = {**data, "server_url": self.server_url}
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temporary, self.path)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._read().get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if tokens else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._write({**self._read(), "tokens": tokens.model_dump(mode="json", exclude_none=True)})

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        client = self._read().get("client_info")
        try:
            return OAuthClientInformationFull.model_validate(client) if client else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        client = client_info.model_dump(mode="json", exclude_none=True)
        self._write({**self._read(), "client_info": client})

    def registered_redirect(self) -> str | None:
        """The redirect URI the stored client was registered with, if any."""
        uris = (self._read().get("client_info") or {}).get("redirect_uris") or []
        return str(uris[0]) if uris else None

    def forget_client(self) -> None:
        """Drop the stored client and its tokens (it is registered again next time)."""
        if self._read():
            self._write({})

    def forget(self) -> None:
        """Remove the file: the next connection authorizes from scratch."""
        self.path.unlink(missing_ok=True)
