"""MainScreen: the workbench's one screen, for a live run and for replay alike.

The pause banner; the timeline beside the tool inspector (after an optional side
panel: proxy mode lists its conversations there); the status bar; a bar at the
bottom (the message box live, the scrubber in replay); the footer. `show(state, now,
...)` brings every widget up to date with a fold of the events. The apps decide when
(the live app paces it, replay draws at each move) and keep what is theirs: the
runtime and its dialogs, replay's position in the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header

from workbench.view.fold import ViewState
from workbench.view.summary import Costs
from workbench.widgets import responsive
from workbench.widgets.footer import Footer
from workbench.widgets.pause_banner import PauseBanner
from workbench.widgets.status_bar import StatusBar
from workbench.widgets.timeline import Timeline
from workbench.widgets.tool_inspector import ToolInspector


class MainScreen(Screen[None]):
    """Timeline, inspector, status and pause banner, drawn from one `ViewState`."""

    def __init__(
        self,
        state: ViewState,
        *,
        labels: dict[str, str],
        clock: Callable[[], float],
        model: str,
        bottom: Widget,
        side: Iterable[Widget] = (),
        mode: str = "live",
        ready: Callable[[], None] | None = None,
    ) -> None:
        """`clock`: "now" for elapsed times (the wall clock live, the event's time in
        replay); `mode`: what the status bar says the screen shows ("live", "replay");
        `ready`: called once the widgets are mounted (the app's start-up)."""
        super().__init__()
        self._ready = ready
        self.mounted = asyncio.Event()
        """Set once the widgets are mounted and `ready` has run (an app's `on_mount`
        waits for it, so no key reaches the app before its start-up)."""
        self.timeline = Timeline(labels, state, clock, id="timeline")
        self.inspector = ToolInspector(id="inspector")
        self.status = StatusBar(model, id="status")
        self.status.mode = mode
        self.pause_banner = PauseBanner(id="pause-banner")
        self.bottom = bottom
        self.side = list(side)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield self.pause_banner
        with Horizontal(id="main"):
            yield from self.side
            yield self.timeline
            yield self.inspector
        yield self.status
        yield self.bottom
        yield Footer()

    def on_mount(self) -> None:
        responsive.follow_width(self.app, self)
        if self._ready is not None:
            self._ready()
        self.mounted.set()

    def show(
        self,
        state: ViewState,
        now: float,
        *,
        selected: str | None,
        descriptions: Mapping[str, str],
        sources: Mapping[str, str] | None = None,
        inspect: bool = True,
        busy: bool = False,
        queued: int = 0,
        costs: Costs | None = None,
        extra: str = "",
    ) -> bool:
        """Show `state` at time `now`, call `selected` marked and in the inspector.

        `state` may be a new object for the same session (replay's fold moving back):
        the timeline keeps what it drew of items that have not changed. A state of
        another session needs `reset` first. `inspect`: False leaves the inspector as
        it is (a burst, see `workbench.widgets.pacing`); `busy`: the timeline draws only what is
        on screen. Returns whether the inspector drew anything.
        """
        timeline = self.timeline
        timeline.selected_id = selected
        timeline.sync(state, now, busy=busy)
        inspected = False
        if inspect:
            record = state.calls.get(selected or "")
            name = record.name if record is not None else ""
            inspected = self.inspector.show(
                record,
                descriptions.get(name, "") if record is not None else "",
                now,
                source=(sources or {}).get(name, "") if record is not None else "",
                batch=state.batch_of(record) if record is not None else None,
            )
        self.status.sync(state, queued=queued, costs=costs, extra=extra)
        self.pause_banner.show(state.pause, timeline.labels)
        return inspected

    def reset(self, state: ViewState, labels: dict[str, str] | None = None) -> None:
        """Forget what was drawn: `state` is another session's (a new run, another
        conversation)."""
        if labels is not None:
            self.timeline.labels = labels
        self.timeline.reset(state)
