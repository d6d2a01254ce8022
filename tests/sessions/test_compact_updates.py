"""The recorder's rate bound on a call's updates, by event time: an update held back is
either written before the call's next line or superseded (and counted), never written
after a later one."""

from __future__ import annotations

from workbench.agent import AgentToolResult
from workbench.agent.events import ToolExecutionStartEvent, ToolExecutionUpdateEvent
from workbench.sessions.compact import FREE_UPDATES, UPDATE_EVERY_MS, Compactor


def update(i: int, at_ms: float) -> ToolExecutionUpdateEvent:
    return ToolExecutionUpdateEvent(
        timestamp=at_ms,
        tool_call_id="c1",
        tool_name="t",
        args={},
        partial_result=AgentToolResult.text(f"line {i}", details={"i": i}),
    )


def written(times: list[float]) -> list[tuple[int, int]]:
    """(i, unrecorded) of each update line written, the recording closed at the end."""
    compactor = Compactor()
    compactor.lines(ToolExecutionStartEvent(tool_call_id="c1", tool_name="t", args={}), 0.0)
    lines = []
    for i, at in enumerate(times):
        lines += compactor.lines(update(i, at), 0.0)
    lines += compactor.held()
    return [(e.partial_result.details["i"], e.unrecorded) for e, *_ in lines]


def test_an_update_held_back_is_superseded_by_a_later_one_written_on_time():
    free = [float(i) for i in range(FREE_UPDATES)]
    last = free[-1]
    # one comes too soon (held), the next is late enough to be written at once
    times = [*free, last + 1, last + UPDATE_EVERY_MS + 1]
    got = written(times)
    assert [i for i, _ in got] == [*range(FREE_UPDATES), FREE_UPDATES + 1]
    assert got[-1] == (FREE_UPDATES + 1, 1)  # it says one before it was not written


def test_every_update_is_written_or_counted_and_in_order():
    times = [float(i) * 7 for i in range(FREE_UPDATES + 500)]  # one each 7 ms
    got = written(times)
    order = [i for i, _ in got]
    assert order == sorted(order) and order[-1] == len(times) - 1
    assert len(got) + sum(n for _, n in got) == len(times)
