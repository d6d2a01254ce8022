"""ScreenStats: what the live app's screen did, for benchmarks and tests.

Pass one to the app (`make_app(runtime, stats=ScreenStats())`) and the app fills it
in; without one it measures nothing and costs nothing. Times are
`time.perf_counter()` seconds.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Listener = Callable[..., None]


@dataclass
class ScreenStats:
    events: int = 0
    """Bus events the app's listener took."""
    listener_seconds: float = 0.0
    """Time inside the listener (queueing each event, folding a full queue)."""
    refreshes: int = 0
    """Times the widgets were brought up to date with the fold."""
    refresh_seconds: float = 0.0
    synced: int = 0
    """How many bus events the widgets have been brought up to date with."""
    painted: int = 0
    """Refreshes the screen has painted."""
    paint_seconds: float = 0.0
    """From each refresh's start until the screen painted it: the refresh, Textual's
    layout and paint, and whatever else ran in between (what
    `workbench.widgets.pacing` paces by)."""
    layouts: int = 0
    """Layouts of the main screen (each lays out and repaints all of it)."""

    def timed(self, listener: Listener) -> Listener:
        """`listener`, counting its calls and time into `events`/`listener_seconds`."""
        clock = time.perf_counter

        def timed_listener(event: Any, signal: Any = None) -> None:
            started = clock()
            listener(event, signal)
            self.listener_seconds += clock() - started
            self.events += 1

        return timed_listener

    def copy(self) -> ScreenStats:
        """The figures so far (subtract two copies for a window of a run)."""
        return copy.copy(self)

    def __sub__(self, earlier: ScreenStats) -> ScreenStats:
        return ScreenStats(
            **{
                name: getattr(self, name) - getattr(earlier, name)
                for name in self.__dataclass_fields__
            }
        )
