"""How batch lanes look: a parallel batch (one slow call, one waiting for approval) and a
sequential batch, drawn from fixed timestamps so the picture never varies."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from workbench.view.records import ToolCallRecord
from workbench.widgets.batch_lanes import render_lanes
from workbench.widgets.tool_inspector import ToolInspector

T = 1_790_000_000_000.0


def record(
    call_id: str, name: str, status: str, phases: list[tuple[str, float]], ended: float | None
) -> ToolCallRecord:
    r = ToolCallRecord(call_id, name, 1, 0, status=status)  # type: ignore[arg-type]
    r.started_at = T + phases[0][1]
    for phase, start in phases:
        r.note(T + start, phase, phase=phase)
    r.ended_at = None if ended is None else T + ended
    return r


PARALLEL = [
    record("a", "run_tests", "running", [("preflight", 0), ("executing", 3200)], None),
    record(
        "b",
        "write_file",
        "done",
        [("preflight", 1), ("approval", 2), ("preflight", 3100), ("executing", 3200)],
        3400,
    ),
    record("c", "read_file", "done", [("preflight", 3150), ("executing", 3200)], 3260),
]
SEQUENTIAL = [
    record("d", "run_command", "done", [("preflight", 0), ("executing", 10)], 1500),
    record("e", "run_command", "error", [("preflight", 1500), ("executing", 1510)], 2600),
    record("f", "read_file", "done", [("preflight", 2600), ("executing", 2605)], 2700),
]


class LanesApp(App[None]):
    CSS = "Static { margin: 1 2; }"

    def __init__(self, records: list[ToolCallRecord], selected: str, now: float) -> None:
        super().__init__()
        self.records, self.selected, self.now = records, selected, now

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        self.call_after_refresh(self._draw)

    def _draw(self) -> None:
        lanes = self.query_one(Static)
        width = max(20, lanes.size.width)
        lanes.update(render_lanes(self.records, self.selected, T + self.now, width))


class InspectorApp(App[None]):
    """The inspector showing one call of a batch: its lanes, with the mouse over them."""

    def __init__(self, records: list[ToolCallRecord], selected: str, now: float) -> None:
        super().__init__()
        self.records, self.selected, self.now = records, selected, now

    def compose(self) -> ComposeResult:
        yield ToolInspector()

    def on_mount(self) -> None:
        self.call_after_refresh(self._show)

    def _show(self) -> None:
        record = next(r for r in self.records if r.id == self.selected)
        self.query_one(ToolInspector).show(record, now=T + self.now, batch=self.records)


def test_parallel_batch_lanes(snap_compare: Any) -> None:
    assert snap_compare(LanesApp(PARALLEL, "b", 5000), terminal_size=(100, 12))


def test_sequential_batch_lanes(snap_compare: Any) -> None:
    assert snap_compare(LanesApp(SEQUENTIAL, "e", 2700), terminal_size=(100, 12))


async def test_hovering_a_lane_shows_its_durations() -> None:
    app = InspectorApp(PARALLEL, "b", 5000)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        inspector = app.query_one(ToolInspector)
        assert "write_file [b]: preflight" in inspector.section_text("Batch lanes")
        first_lane = inspector._anchors["Batch lanes"] + 1
        await pilot.hover(inspector, offset=(20, first_lane))  # the first lane: run_tests
        lanes = inspector.section_text("Batch lanes")
        assert "run_tests [a]: preflight" in lanes and "executing 1.8s" in lanes
        await pilot.hover(inspector, offset=(20, first_lane + 8))  # below the lanes
        assert "write_file [b]" in inspector.section_text("Batch lanes")


async def test_an_inspector_showing_a_batch_keeps_textuals_batch_context() -> None:
    """The batch it shows is its own attribute: `Widget.batch()`, which Textual's
    `recompose` enters, stays the context manager (a list there broke recompose)."""
    app = InspectorApp(PARALLEL, "b", 5000)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        inspector = app.query_one(ToolInspector)
        assert "write_file [b]: preflight" in inspector.section_text("Batch lanes")
        await inspector.recompose()
        await pilot.pause()
        assert inspector.is_attached
