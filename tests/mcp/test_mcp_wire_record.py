"""The wire recording's caps and order: held until a run starts, then put on the bus in
order; past a server's cap, one event says the rest were not recorded."""

from __future__ import annotations

import time
from typing import Any

import pytest

from workbench.agent.events import AgentStartEvent
from workbench.mcp import wire_record
from workbench.mcp.wire import WireEntry
from workbench.mcp.wire_record import WireRecording


class Bus:
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def publish(self, event: Any) -> None:
        self.events.append(event)


def entry(n: int, chars: int = 10) -> WireEntry:
    return WireEntry(float(n), n % 2 == 0, f"m{n}", "x" * chars, "tools/call", time.monotonic())


async def test_held_until_a_run_starts_then_in_order_and_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wire_record, "WIRE_MESSAGES", 3)
    recording, bus = WireRecording(), Bus()
    for n in range(5):
        recording.add("a", entry(n))
    recording.add("b", entry(9))
    await recording.flush(bus)
    assert bus.events == []  # no run yet
    recording.on_bus(AgentStartEvent())
    await recording.flush(bus)
    assert [(e.server, e.summary) for e in bus.events[:3]] == [
        ("a", "m0"),
        ("a", "m1"),
        ("a", "m2"),
    ]
    marker = bus.events[3]
    assert marker.server == "a" and marker.text == ""
    assert marker.summary.startswith("(later messages with a are not recorded")
    assert [(e.server, e.summary) for e in bus.events[4:]] == [("b", "m9")]
    assert abs(bus.events[0].timestamp - time.time() * 1000) < 5000


async def test_the_character_cap_counts_per_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_record, "WIRE_CHARS", 25)
    recording, bus = WireRecording(), Bus()
    recording.on_bus(AgentStartEvent())
    for n in range(4):
        recording.add("a", entry(n))
    await recording.flush(bus)
    assert [e.summary for e in bus.events][:2] == ["m0", "m1"]
    assert bus.events[2].summary.startswith("(later messages")
    assert len(bus.events) == 3
