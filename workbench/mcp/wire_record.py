"""The MCP wire in the session: each JSON-RPC message with each server becomes an
`McpWireEvent` on the agent's bus (so the recorder writes it and replay's wire view
shows it), masked and cut as the live view keeps it (`workbench.mcp.wire`).

The messages of the servers' start (initialize, the lists) come before any run: they
are held and put on the bus after the first `agent_start`, each with the time it
passed, so a session is still created only by a run. Per server, a session holds at
most what the live view holds (`WIRE_MESSAGES` messages, `WIRE_CHARS` characters);
past that one event says the later messages were not recorded.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from workbench.bus_events import McpWireEvent
from workbench.mcp.wire import WIRE_CHARS, WIRE_MESSAGES, WireEntry


class WireRecording:
    """Turns wire entries into bus events, in order, once a run has started."""

    def __init__(self) -> None:
        self._queue: list[McpWireEvent] = []
        self._kept: dict[str, tuple[int, int]] = {}
        """Per server: messages and characters recorded so far."""
        self._wake: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._stopped = False
        self.live = False
        """A run has started: held and new messages go on the bus."""

    def add(self, server: str, entry: WireEntry) -> None:
        """Hold `entry` for the bus (a wire's `on_entry`)."""
        count, chars = self._kept.get(server, (0, 0))
        if count > WIRE_MESSAGES:
            return  # the cap was reached and said
        timestamp = time.time() * 1000.0 - (time.monotonic() - entry.clock) * 1000.0
        if count == WIRE_MESSAGES or chars + len(entry.text) > WIRE_CHARS:
            event = McpWireEvent(
                timestamp=timestamp,
                server=server,
                outgoing=entry.outgoing,
                at=entry.at,
                summary=(
                    f"(later messages with {server} are not recorded: a session keeps "
                    f"{WIRE_MESSAGES:,} messages or {WIRE_CHARS:,} characters per server)"
                ),
            )
            self._kept[server] = (WIRE_MESSAGES + 1, chars)
        else:
            event = McpWireEvent(
                timestamp=timestamp,
                server=server,
                outgoing=entry.outgoing,
                at=entry.at,
                summary=entry.summary,
                method=entry.method,
                text=entry.text,
            )
            self._kept[server] = (count + 1, chars + len(entry.text))
        self._queue.append(event)
        if self._wake is not None:
            self._wake.set()

    def on_bus(self, event: Any, _signal: Any = None) -> None:
        """A bus listener: the first run's start lets the held messages go."""
        if not self.live and getattr(event, "type", None) == "agent_start":
            self.live = True
            if self._wake is not None:
                self._wake.set()

    async def flush(self, agent: Any) -> None:
        """Put every held message on `agent`'s bus now (if a run has started)."""
        while self.live and self._queue:
            batch, self._queue = self._queue, []
            for event in batch:
                await agent.publish(event)

    async def pump(self, agent: Any) -> None:
        """Put messages on `agent`'s bus as they come, until `stop()`."""
        with anyio.CancelScope() as self._scope:
            while not self._stopped:
                self._wake = anyio.Event()
                if self.live and self._queue:
                    await self.flush(agent)
                    continue
                await self._wake.wait()

    def stop(self) -> None:
        """End `pump` (at once, or as soon as it starts)."""
        self._stopped = True
        if self._scope is not None:
            self._scope.cancel()
