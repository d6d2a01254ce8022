"""Opening an MCP server's transport: a stdio process (and every process it starts),
streamable HTTP, or the older HTTP+SSE.

Each is an async context manager yielding the SDK's (read, write) streams. Every
stdio server's process tree is kept in `LIVE_TREES` while it runs: whatever way the
workbench ends (a signal, an exception, a loop torn down before the servers were
stopped), `kill_server_trees` runs at interpreter exit and ends what is left.
"""

from __future__ import annotations

import atexit
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import httpx2
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from workbench.mcp.bounds import SERVER_TREE_GRACE, end_tree_when_server_exits
from workbench.mcp.config import McpServerConfig
from workbench.mcp.early import EarlyProcess
from workbench.mcp.oauth import Authorization
from workbench.mcp.stdio import stdio_client
from workbench.proctree import ProcessTree

Early = tuple[EarlyProcess, TextIO, ProcessTree]
"""A server process started before the SDK loaded (see `workbench.mcp.early`)."""
Person = tuple[Callable[[str], None], Callable[[bool], None]]
"""Who is shown an OAuth authorization URL, and who is told while it waits on them."""

LIVE_TREES: set[ProcessTree] = set()
"""The process trees of the stdio servers running now."""
_at_exit: list[bool] = []


def kill_server_trees() -> None:
    """SIGKILL every process of every stdio server still running (no time to wait)."""
    for tree in list(LIVE_TREES):
        tree.kill()
        LIVE_TREES.discard(tree)


@asynccontextmanager
async def stdio_transport(
    config: McpServerConfig, stderr: TextIO, early: Early | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server's process (its stderr to `stderr`), or take the one started
    `early`; when it stops or exits, every process it started ends too."""
    assert config.command is not None
    tree = early[2] if early is not None else ProcessTree(f"mcp-{config.name}")
    if not _at_exit:
        atexit.register(kill_server_trees)
        _at_exit.append(True)
    params = StdioServerParameters(
        command=config.command[0],
        args=list(config.command[1:]),
        env=tree.env(dict(config.env)),
        cwd=config.cwd,
        encoding_error_handler="replace",  # bytes that are not UTF-8 read as U+FFFD
    )
    LIVE_TREES.add(tree)
    try:
        started = early[0] if early is not None else None
        async with stdio_client(params, errlog=stderr, started=started) as (read, write):
            async with anyio.create_task_group() as tg:
                tg.start_soon(end_tree_when_server_exits, tree)
                yield read, write
                tg.cancel_scope.cancel()
    finally:
        # The SDK ends the server's process group; children that left it
        # (setsid, double fork) end here, whether the server exited or was stopped.
        with anyio.CancelScope(shield=True):
            await tree.end(SERVER_TREE_GRACE)
        LIVE_TREES.discard(tree)


@asynccontextmanager
async def http_transport(
    config: McpServerConfig,
    on_error: Callable[[int, str], None],
    person: Person | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Connect over streamable HTTP (or HTTP+SSE with `config.sse`); each HTTP error
    status of an MCP request is passed to `on_error` (to say why a start failed). With
    a `person` (and `config.oauth`, and no Authorization header of the config's own), a
    401 starts the OAuth flow (`workbench.mcp.oauth`)."""
    assert config.url is not None
    from mcp.shared._httpx_utils import create_mcp_http_client

    endpoint = httpx2.URL(config.url).path

    async def seen(response: Any) -> None:
        request = response.request  # an MCP message, not one of OAuth's requests
        if config.sse:
            mcp = request.url.path == endpoint or "session_id" in request.url.params
        else:
            mcp = request.method == "POST" and request.url.path == endpoint
        if response.status_code >= 400 and mcp:
            on_error(response.status_code, response.reason_phrase or "")

    def client_factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["response"].append(seen)
        return client

    own_credentials = any(name.strip().lower() == "authorization" for name in config.headers)
    oauth = None
    if person is not None and config.oauth and not own_credentials:
        oauth = Authorization(config.url, *person)
    auth = oauth.provider if oauth is not None else None
    try:
        if config.sse:
            from mcp.client.sse import sse_client

            async with sse_client(
                config.url,
                headers=config.headers or None,
                auth=auth,
                httpx_client_factory=client_factory,
            ) as streams:
                yield streams[0], streams[1]
        else:
            client = client_factory(headers=config.headers or None, auth=auth)
            async with client, streamable_http_client(config.url, http_client=client) as streams:
                yield streams[0], streams[1]
    finally:
        if oauth is not None:
            oauth.close()
