"""When the screen refreshes: the app's pacing policy, with no Textual in it.

Events fold into the view state as they arrive; the screen is brought up to date at
most `hz` times a second. A *burst* is events arriving faster than `burst_rate` a
second (a scripted run at full speed, a tool flooding `on_update`): the agent is busy
with its own work, not waiting on a model, and every millisecond the screen takes is
one the agent waits. During a burst:

- refreshes are `burst_interval` apart, or further if a refresh costs more than
  1/`budget` of that: the screen's share of a burst is held to 5 %, beside the fold
  of every event, which no pacing saves, so that the app as a whole costs the agent
  at most a fifth (`benchmarks/ui_throughput.py`; figures in benchmarks/README.md);
- the inspector, when it follows the newest call, catches up once every
  `inspect_interval` (the newest call changes faster than anyone can read it), or
  further apart if showing a call costs more than 1/`inspect_budget` of that (a call
  with long arguments, output or result takes a while to render).

Times are `time.perf_counter()` seconds, passed in so tests can drive the clock.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Pacer:
    hz: float = 30.0
    burst_rate: float = 2_000.0
    burst_interval: float = 0.5
    budget: float = 20.0
    inspect_budget: float = 20.0
    inspect_interval: float = 1.0
    burst: bool = False
    """Events arrived faster than `burst_rate` before the last refresh."""
    cost: float = 0.0
    """What a refresh costs, up to the screen painting it (a moving average)."""
    inspect_cost: float = 0.0
    """What a refresh that showed a call in the inspector costs (a moving average)."""
    synced: int = 0
    """How many events the screen has been brought up to date with."""
    window_start: float = 0.0
    """When the first event not yet on screen arrived (set by `arrived`)."""
    last_refresh: float = 0.0
    inspected_at: float = 0.0

    def arrived(self, now: float) -> None:
        """The first event since the last refresh arrived (the caller knows: it is the
        one that schedules the next refresh, so no clock is read for the others)."""
        self.window_start = now

    def delay(self, now: float) -> float:
        """Seconds until the next refresh may run."""
        if self.burst:
            interval = max(self.burst_interval, self.cost * self.budget)
        else:
            interval = max(1.0 / self.hz, self.cost * 2)
        return max(0.002, self.last_refresh + interval - now)

    def refreshing(self, count: int, now: float, *, waiting: bool = False) -> None:
        """A refresh starts, bringing the screen to `count` events: was it a burst?

        `waiting`: the agent waits on the user (a permission request, a pause) or has
        stopped, so whatever came before, the burst is over: show everything now.
        """
        arrived = count - self.synced
        window = max(now - max(self.window_start, self.last_refresh), 1e-3)
        fast = arrived / window > self.burst_rate
        burst = not waiting and arrived > self.burst_rate / self.hz and fast
        if burst and not self.burst:
            self.inspected_at = now  # the inspector keeps its call for a while
        self.burst, self.last_refresh, self.synced = burst, now, count

    def inspect(self, now: float, *, following: bool) -> bool:
        """Should this refresh update the inspector?"""
        interval = max(self.inspect_interval, self.inspect_cost * self.inspect_budget)
        if following and self.burst and now - self.inspected_at < interval:
            return False
        self.inspected_at = now
        return True

    def painted(self, cost: float, *, inspected: bool = False) -> None:
        """A refresh was painted `cost` seconds after it started (`inspected`: it showed
        a call in the inspector)."""
        self.cost = 0.5 * self.cost + 0.5 * cost
        if inspected:
            self.inspect_cost = 0.5 * self.inspect_cost + 0.5 * cost
