"""What a session file may not decide on its own: where tools run, and what code starts.

A session file is data anyone can hand you. Its header names a workspace, and a re-run
or a fork never runs tools there unless the user names the directory
(`trusted_workspace`); the filesystem root and the home directory are refused even
then. The header also names code to run: `--tools` files and MCP server commands, so
`rerun` (and a fork) must not start what a stranger wrote there. Each setup the
workbench records is signed with an HMAC under a key only this user can read (created
on first use next to the sessions, mode 0600); a setup whose signature checks was
written by a workbench of this user, and is restarted by default. Anything else needs
an explicit flag.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

RunKind = Literal["re-run", "fork"]

KEY_FILE = ".session-key"


def key_path() -> Path:
    from workbench.sessions.header import default_session_dir

    return default_session_dir() / KEY_FILE


def _key(create: bool) -> bytes | None:
    path = key_path()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made meanwhile by another workbench
        return path.read_bytes()
    with os.fdopen(fd, "wb") as out:
        key = secrets.token_bytes(32)
        out.write(key)
    return key


def _digest(key: bytes, setup: Any) -> str:
    payload = setup.model_dump_json(exclude={"signature"}).encode()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def sign(setup: Any) -> str | None:
    """The setup's signature (None if the key cannot be written: then it is untrusted)."""
    try:
        key = _key(create=True)
    except OSError:
        return None
    return None if key is None else _digest(key, setup)


def trusted(setup: Any) -> bool:
    """Whether `setup` carries a valid signature of this user's key."""
    if setup is None or not setup.signature:
        return False
    try:
        key = _key(create=False)
    except OSError:
        return False
    return key is not None and hmac.compare_digest(setup.signature, _digest(key, setup))


def needs_starting(setup: Any) -> bool:
    """Whether the setup names any code to run (tool specs or MCP servers)."""
    return setup is not None and bool(setup.tool_specs or setup.mcp_servers)


_DOING = {"re-run": "re-run tools", "fork": "run a fork's tools"}


def check_workspace(path: Path, kind: RunKind = "re-run") -> None:
    """Refuse (ValueError) `/` and the home directory as a workspace."""
    real = os.path.realpath(path)
    if real in (os.path.realpath("/"), os.path.realpath(Path.home())):
        raise ValueError(
            f"refusing to {_DOING[kind]} in {str(path)!r}: the filesystem root and the home "
            "directory are never a workspace; pass --workspace DIR with a project directory"
        )


def untrusted_path(recorded: str | None, kind: RunKind = "re-run") -> str:
    """Why the workspace path a session holds is not used (for an error line)."""
    return (
        f"the session ran in {recorded or '(unknown)'!r}, and a {kind} does not trust a "
        "path from a session file: pass --workspace DIR"
    )


def trusted_workspace(
    named: Path | None,
    scratch: Callable[[], Path] | None,
    recorded: str | None,
    kind: RunKind = "re-run",
) -> Path:
    """Where a re-run or a fork of a session runs its tools: the directory the user
    named, else a fresh copy of the recorded scenario's files (`scratch`, None without
    a scenario); never the path the session holds (`recorded`, named in the error).

    Raises:
        ValueError: nothing named and no scenario, or `/` or the home directory.
    """
    if named is None:
        if scratch is None:
            raise ValueError(untrusted_path(recorded, kind))
        named = scratch()
    check_workspace(named, kind)
    return named
