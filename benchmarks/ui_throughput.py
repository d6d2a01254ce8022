"""UI throughput: does the app slow the agent down, and does the screen keep up?

Runs one scripted run at full speed (1,000 tool calls, 10,000 `on_update` events and
long streamed text) twice: headless (the runtime alone) and with the app attached
(`App.run_test`, a real Textual app at 160x48 rendering to a headless driver). Prints
both times, their ratio, and how long after the last event the screen showed it.

    python benchmarks/ui_throughput.py [--turns 50] [--calls 20] [--updates 10] [--repeat 5]

Targets (issue #5): ratio at most 1.2; last update on screen within one second.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workload import add_workload_arguments, workload_argv  # noqa: E402
from widgets.app import make_app  # noqa: E402
from workbench import gc_policy  # noqa: E402
from workbench.agent import AgentToolResult, tool  # noqa: E402
from workbench.providers.scripted import Scenario  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402

PARAGRAPH = (
    "The workbench folds every event into its view model at once and redraws at a "
    "bounded rate, so a burst of deltas costs the agent almost nothing. "
)


def make_scenario(turns: int, calls: int, text_chars: int) -> Scenario:
    text = (PARAGRAPH * (text_chars // len(PARAGRAPH) + 1))[:text_chars]
    script = [
        {
            "text": text,
            "tool_calls": [{"name": "chatty", "arguments": {"n": i}} for i in range(calls)],
        }
        for _ in range(turns)
    ]
    script.append({"text": "finished"})
    return Scenario.model_validate({"name": "bench", "turns": script})


def make_tool(updates: int):  # type: ignore[no-untyped-def]
    @tool
    async def chatty(n: int, on_update) -> str:  # type: ignore[no-untyped-def]
        """Send `updates` progress updates, then return."""
        for i in range(updates):
            on_update(AgentToolResult.text(f"call {n}: step {i + 1}/{updates}"))
        return f"call {n} done"

    return chatty


def build(args: argparse.Namespace, workspace: Path):  # type: ignore[no-untyped-def]
    scenario = make_scenario(args.turns, args.calls, args.text)
    options = RunOptions(
        scenario=scenario,
        workspace=workspace,
        pace=math.inf,
        tools=[make_tool(args.updates)],
        allow=["chatty"],
        record=False,
    )
    return build_runtime(options)


WINDOW_MARK: Callable[[], object] | None = None
"""Called where a measured run starts and at its `agent_end` (`ui_instructions.py`
counts the instructions between the two calls)."""


def mark_window() -> None:
    if WINDOW_MARK is not None:
        WINDOW_MARK()


class Stamps:
    """A bus listener noting how many events arrived, and when the last one and the
    run's end (`agent_end`) did. The agent's time is start to `agent_end`: what the
    screen does after the run is over is the lag, not the agent's time."""

    clock = staticmethod(time.perf_counter)
    """Read for every event (`ui_instructions.py` keeps it at the unslowed clock)."""

    def __init__(self) -> None:
        self.count = 0
        self.last = 0.0
        self.ended = 0.0

    def __call__(self, event, _signal=None) -> None:  # type: ignore[no-untyped-def]
        self.count += 1
        self.last = self.clock()
        if ATTRIBUTION is not None:
            ATTRIBUTION.on = event.type != "agent_end"
        if event.type == "agent_end":
            self.ended = self.last
            mark_window()


class Attribution:
    """Where the time of a run goes, measured inside it (`--attribute`): the app's
    listener (the fold), its refreshes, Textual's paints and layouts, and garbage
    collection, each summed from the run's first event to `agent_end` (a collection
    that happens inside one of the others counts as collection only).

    Timing every event costs time of its own (15 to 30 ms a run), so these runs are not
    the ones the ratio is taken from. What the timing adds to the fold's figure is
    measured in the same process (`calibrate`: the timed wrapper around an empty
    listener, against the bare one) and taken off it. Unlike the ratio, these shares
    barely move with the machine's speed: they say where the app's overhead is.
    """

    def __init__(self) -> None:
        self.on = False
        self.ms: dict[str, float] = dict.fromkeys(["fold", "refresh", "paint", "layout", "gc"], 0.0)
        self.counts: dict[str, int] = dict.fromkeys(["refresh", "paint", "layout", "gc"], 0)
        self._gc_started = 0.0
        self.events = 0
        self.timing_cost = 0.0
        """Seconds the per-event timing adds to the fold's figure, per event."""

    def install(self) -> None:
        from textual.screen import Screen

        from widgets.app import WorkbenchApp

        self._time(WorkbenchApp, "_refresh_now", "refresh")
        self._time(Screen, "_compositor_refresh", "paint")
        self._time(Screen, "_refresh_layout", "layout")
        WorkbenchApp._on_bus_event = self._timed_listener(WorkbenchApp._on_bus_event)  # type: ignore[method-assign]
        gc.callbacks.append(self._on_gc)
        self.timing_cost = self.calibrate()

    def _timed_listener(self, listener):  # type: ignore[no-untyped-def]
        def timed_listener(app, event, signal=None):  # type: ignore[no-untyped-def]
            started, collected = time.perf_counter(), self.ms["gc"]
            listener(app, event, signal)
            if self.on:
                self._add("fold", started, collected)
                self.events += 1

        return timed_listener

    def calibrate(self, calls: int = 20_000, rounds: int = 5) -> float:
        """What timing one listener call adds, in seconds: the timed wrapper around an
        empty listener against the bare empty listener (the fastest of `rounds`)."""

        def empty(app, event, signal=None):  # type: ignore[no-untyped-def]
            return None

        timed = self._timed_listener(empty)
        saved = dict(self.ms), self.events, self.on
        self.on = True  # the wrapper's path during a run (what it adds is put back below)

        def seconds(listener) -> float:  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            for _ in range(calls):
                listener(None, None)
            return time.perf_counter() - started

        # The fastest run of each, not the smallest difference: one preempted run of
        # the bare listener would make a difference negative.
        fastest_timed = min(seconds(timed) for _ in range(rounds))
        fastest_empty = min(seconds(empty) for _ in range(rounds))
        cost = (fastest_timed - fastest_empty) / calls
        self.ms, self.events, self.on = saved
        return max(cost, 0.0)

    def _time(self, cls: type, name: str, label: str) -> None:
        original = getattr(cls, name)

        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            if not self.on:
                return original(*args, **kwargs)
            started, collected = time.perf_counter(), self.ms["gc"]
            try:
                return original(*args, **kwargs)
            finally:
                self._add(label, started, collected)
                self.counts[label] += 1

        setattr(cls, name, timed)

    def _add(self, label: str, started: float, collected: float) -> None:
        """Count the time since `started`, less any collection meanwhile (counted as gc)."""
        self.ms[label] += (time.perf_counter() - started) * 1000 - (self.ms["gc"] - collected)

    def _on_gc(self, phase: str, _info: dict) -> None:  # type: ignore[type-arg]
        if not self.on:
            return
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.ms["gc"] += (time.perf_counter() - self._gc_started) * 1000
            self.counts["gc"] += 1


ATTRIBUTION: Attribution | None = None


async def headless(args: argparse.Namespace, workspace: Path) -> tuple[float, int]:
    runtime = build(args, workspace)
    stamps = Stamps()
    runtime.agent.subscribe(stamps)
    with gc_policy.session_gc():  # the policy the app and `--headless` run under
        mark_window()
        start = time.perf_counter()
        await runtime.agent.prompt("go")
    return stamps.ended - start, stamps.count


async def with_app(args: argparse.Namespace, workspace: Path) -> tuple[float, float, int]:
    runtime = build(args, workspace)
    app = make_app(runtime, prefill="go")
    stamps = Stamps()
    runtime.agent.subscribe(stamps)  # before the app's own listener
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)  # start-up finishes (the footer builds after the first frame)
        mark_window()
        start = time.perf_counter()
        app._run_prompt("go")
        await asyncio.sleep(0)
        await runtime.agent.wait_for_idle()
        while runtime.agent.state.is_streaming:
            await asyncio.sleep(0.001)
        # the screen shows the last event once a refresh has synced the final state
        while app.synced_event_count < app.view_state.event_count:
            await asyncio.sleep(0.001)
        await pilot.pause()
        shown = time.perf_counter()
        assert app.view_state.run_state == "finished", app.view_state.run_state
    return stamps.ended - start, shown - stamps.last, stamps.count


async def start_and_close_an_app(workspace: Path) -> None:
    """What the app run does before its run starts: build and mount an app, and wait.

    The headless run does it too, so both runs start on the same footing: this VM's
    CPU runs some 10 % slower after a couple of seconds of sustained load (measured:
    median 0.57 s fresh, 0.64 s after a 2 s busy loop), and the app's start-up is
    such a load.
    """
    workspace.mkdir()
    app = make_app(build(argparse.Namespace(turns=1, calls=1, updates=1, text=10), workspace))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)


def measure(args: argparse.Namespace, which: str) -> dict[str, float]:
    """One run, in this process: the agent's time (and, with the app, the screen's lag)."""
    global ATTRIBUTION
    if args.attribute and ATTRIBUTION is None:
        ATTRIBUTION = Attribution()
        ATTRIBUTION.install()
    gc.collect()  # what an earlier run in this process left is not this run's to collect
    with tempfile.TemporaryDirectory() as tmp:
        if which == "headless":
            if not args.warm:
                asyncio.run(start_and_close_an_app(Path(tmp) / "warm-up"))
                gc.collect()
            seconds, events = asyncio.run(headless(args, Path(tmp)))
            result = {"seconds": seconds, "events": events}
        else:
            seconds, lag, events = asyncio.run(with_app(args, Path(tmp)))
            result = {"seconds": seconds, "lag": lag, "events": events}
    if ATTRIBUTION is not None:
        result["timing_ms"] = ATTRIBUTION.events * ATTRIBUTION.timing_cost * 1000
        ATTRIBUTION.ms["fold"] -= result["timing_ms"]
        result |= {f"{k}_ms": v for k, v in ATTRIBUTION.ms.items()}
        result |= {f"{k}_count": v for k, v in ATTRIBUTION.counts.items()}
    return result


def repeat_once(args: argparse.Namespace) -> list[dict[str, float]]:
    """headless, app, app, headless: a drift of the machine's speed within the repeat
    cancels out. Fresh (default): each run in a new interpreter, so the app's run is its
    first, cold caches and all. Warm: all four in one interpreter after one discarded
    run of each, like every run after the first in a session, except that each app
    run mounts a new app, which a session never does: every closed app leaves some 12k
    objects alive (Textual's `StylesCache` keeps its instances in a method's
    `lru_cache`), so later runs here carry a heap a session would not."""
    order = ["headless", "app", "app", "headless"]
    if args.warm:
        return [measure(args, which) for which in ["headless", "app", *order]][2:]
    return [in_subprocess(args, which) for which in order]


def in_subprocess(args: argparse.Namespace, which: str) -> dict[str, float]:
    command = [
        sys.executable, __file__, "--one", which, *workload_argv(args),
        *(["--attribute"] if args.attribute else []),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_workload_arguments(parser)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--warm", action="store_true", help="measure runs after the first (see repeat_once)"
    )
    parser.add_argument(
        "--attribute", action="store_true",
        help="instead of the ratio: where the app's time goes inside a run (see Attribution)",
    )
    parser.add_argument("--one", choices=["headless", "app"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args, args.one)))
        return
    if args.attribute:
        attribute(args)
        return
    calls = args.turns * args.calls
    print(
        f"{calls} tool calls, {calls * args.updates} on_update events, "
        f"{args.turns * args.text:,} characters of streamed text, median of {args.repeat} "
        f"({'warm: runs after the first' if args.warm else 'fresh: each run a new interpreter'})"
    )
    # This machine's speed drifts from one second to the next: the ratio reported is
    # the median of the repeats' ratios, each from an ABBA sequence (see repeat_once).
    plain, app_times, lags, ratios = [], [], [], []
    for _ in range(args.repeat):
        first, *runs, last = repeat_once(args)
        plain += [first["seconds"], last["seconds"]]
        app_times += [run["seconds"] for run in runs]
        lags += [run["lag"] for run in runs]
        ratios.append(sum(run["seconds"] for run in runs) / (first["seconds"] + last["seconds"]))
    print(f"events per run:          {int(first['events']):,}")
    print(f"headless:                {statistics.median(plain):.2f} s (median)")
    print(f"with the app attached:   {statistics.median(app_times):.2f} s (median)")
    print(
        f"ratio:                   {statistics.median(ratios):.2f}   (target <= 1.2; "
        f"each repeat: {', '.join(f'{r:.2f}' for r in sorted(ratios))})"
    )
    interval = median_interval(ratios)
    if interval is not None:
        low, high, coverage = interval
        print(f"  the median lies in:    {low:.2f} to {high:.2f}   ({coverage:.0%} confidence)")
    # Interference from other work on the machine only ever adds time, so the fastest
    # of many runs is the least disturbed one (what `timeit` reports, for this reason).
    fastest, fastest_plain = min(app_times), min(plain)
    print(
        f"ratio of the fastest:    {fastest / fastest_plain:.2f}   "
        f"({fastest:.2f} s / {fastest_plain:.2f} s)"
    )
    lag_ms = statistics.median(lags) * 1000
    print(f"last event on screen:    {lag_ms:.0f} ms after it (median; target < 1000)")


def median_interval(
    values: list[float], confidence: float = 0.95
) -> tuple[float, float, float] | None:
    """A distribution-free interval for the median of `values`' population: the k-th
    smallest and k-th largest value, for the largest k whose coverage (from the
    binomial distribution: each value is below the median with probability 1/2) is
    at least `confidence`. Returns (low, high, coverage), or None for too few values."""
    n = len(values)
    ordered = sorted(values)
    below = 0.0  # P(at most k - 1 of n values fall below the median)
    best = None
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2**n
        coverage = 1 - 2 * below
        if coverage < confidence:
            break
        best = (ordered[k - 1], ordered[n - k], coverage)
    return best


def attribute(args: argparse.Namespace) -> None:
    """Print where the time goes inside instrumented runs (medians of `--repeat` pairs)."""
    pairs = [
        (in_subprocess(args, "headless"), in_subprocess(args, "app")) for _ in range(args.repeat)
    ]

    def median(which: int, key: str) -> float:
        return statistics.median(pair[which][key] for pair in pairs)

    def times(key: str, what: str = "of them") -> str:
        return f"{median(1, key):.0f} {what}"

    run_ms = median(1, "seconds") * 1000
    print(f"inside the app's run: median of {args.repeat} instrumented runs, {run_ms:.0f} ms each")
    rows = [
        ("fold (the app's bus listener)", median(1, "fold_ms"),
         f"timing's own {median(1, 'timing_ms'):.0f} ms taken off"),
        ("refreshes (widgets brought up to date)", median(1, "refresh_ms"), times("refresh_count")),
        ("paints (Textual's compositor)", median(1, "paint_ms"), times("paint_count")),
        ("layouts", median(1, "layout_ms"), times("layout_count")),
        ("garbage collection", median(1, "gc_ms"), times("gc_count", "collections")),
    ]
    for label, ms, note in rows:
        print(f"  {label:40s} {ms:6.1f} ms  {ms / run_ms:6.1%}  {note}")
    gc_headless = median(0, "gc_ms")
    print(
        f"  (garbage collection in the headless run: {gc_headless:.1f} ms, "
        f"{median(0, 'gc_count'):.0f} collections)"
    )
    own = sum(ms for _, ms, _ in rows) - gc_headless
    print(
        f"the app's own work: {own:.0f} ms of the run, {own / run_ms:.1%} "
        f"(a ratio of {run_ms / (run_ms - own):.2f} if the rest of the run is the headless run)"
    )


if __name__ == "__main__":
    main()
