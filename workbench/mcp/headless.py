"""A headless run with MCP servers: started first, each one's outcome said, and
stopped (their process trees ended) however the run ends.

SIGTERM and SIGHUP abort the run (or its servers' start) and the servers stop before
the workbench exits; Ctrl-C while the servers start stops them and says so, without
a traceback (once the run goes, Ctrl-C aborts the run, see `cli.headless`). What the
servers log (`notifications/message`, at `--mcp-log-level`) goes to stderr.
"""

from __future__ import annotations

import signal as signals
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from workbench.mcp.hub import describe_failure
from workbench.sanitize import literal

EXIT_ABORTED = 130


def _say(text: str) -> None:
    print(f"workbench: {literal(text)}", file=sys.stderr)


def _authorization(connection: Any, url: str | None) -> None:
    if url is None:
        _say(f"MCP server {connection.name}: authorization received")
    else:
        _say(f"MCP server {connection.name} needs authorization: open this URL in a browser: {url}")


async def run_with_servers(runtime: Any, run: Callable[[], Awaitable[int]]) -> int:
    """Start `runtime`'s MCP servers, then `run()`; the exit code (130 if a signal
    ended it)."""
    hub = runtime.mcp
    got: list[signals.Signals] = []
    running = False

    def stop(scope: anyio.CancelScope, which: signals.Signals) -> None:
        got.append(which)
        if running:
            runtime.agent.abort(f"Stopped by {which.name}")
        else:
            scope.cancel()

    async def watch(scope: anyio.CancelScope, *which: signals.Signals) -> None:
        with anyio.open_signal_receiver(*which) as received:
            async for each in received:
                stop(scope, signals.Signals(each))

    code = EXIT_ABORTED
    async with anyio.create_task_group() as tg:
        # (while the run goes, its own Ctrl-C receiver takes SIGINT over)
        tg.start_soon(watch, tg.cancel_scope, signals.SIGTERM, signals.SIGHUP, signals.SIGINT)
        await anyio.sleep(0)  # the receiver is in place before the servers start
        hub.on_authorize = _authorization
        async with hub.attach(runtime.agent):
            for line in hub.report():
                _say(line)
            hub.on_change = lambda c: _say(describe_failure(c))
            hub.on_log = lambda c, line: _say(f"MCP server {c.name} logged: {line}")
            hub.asker.on_note = _say
            running = True
            code = await run()
        tg.cancel_scope.cancel()
    if got:
        started = "" if running else " while the MCP servers were starting"
        _say(f"stopped by {got[0].name}{started}; the MCP servers were stopped")
        return EXIT_ABORTED
    return code
