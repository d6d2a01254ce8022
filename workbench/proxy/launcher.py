"""`workbench proxy [options] -- COMMAND ARGS...`: start a client pointed at the proxy.

The child gets the environment each client reads its endpoint from: the OpenAI SDKs,
the Agents SDK, Codex and opencode read `OPENAI_BASE_URL` (with `/v1`); the Anthropic
SDKs and Claude Code `ANTHROPIC_BASE_URL` (without it, they add `/v1/messages`);
Gemini CLI `GOOGLE_GEMINI_BASE_URL`. A key variable the client needs before it will
start is filled with a stand-in (or the `--token`) when it is not set: the proxy
puts the upstream's key in its place. The proxy stops when the child ends, and the
child's exit status is the command's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

STAND_IN_KEY = "workbench-proxy"
"""What a client is given as its key when it has none (the proxy sends the upstream's)."""
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the proxy's own arguments, the command after `--`)."""
    if "--" not in argv:
        return list(argv), []
    at = list(argv).index("--")
    return list(argv[:at]), list(argv[at + 1 :])


def client_environment(
    base: Mapping[str, str], proxy_url: str, *, token: str | None, has_upstream_key: bool
) -> dict[str, str]:
    """The child's environment: `base` pointed at the proxy (`proxy_url` ends in /v1)."""
    root = proxy_url.removesuffix("/v1")
    env = dict(base)
    env.update(
        {
            "OPENAI_BASE_URL": proxy_url,
            "OPENAI_API_BASE": proxy_url,
            "ANTHROPIC_BASE_URL": root,
            "GOOGLE_GEMINI_BASE_URL": root,
            "GEMINI_API_BASE_URL": root,
            "WORKBENCH_PROXY_URL": proxy_url,
        }
    )
    for name in KEY_VARIABLES:
        if token is not None:
            env[name] = token
        elif has_upstream_key or not env.get(name):
            env[name] = env.get(name) or STAND_IN_KEY
    return env


async def run_client(
    command: list[str],
    env: dict[str, str],
    *,
    quiet: bool = False,
    log: str | None = None,
) -> int:
    """Run the client to its end (its own terminal unless `quiet`: then its output goes
    to `log`); its exit status."""
    if quiet:
        with open(log or os.devnull, "ab") as out:
            process = await anyio.open_process(command, env=env, stdin=None, stdout=out, stderr=out)
            return await process.wait()
    process = await anyio.open_process(command, env=env, stdin=None, stdout=None, stderr=None)
    try:
        return await process.wait()
    finally:
        if process.returncode is None:
            process.terminate()
