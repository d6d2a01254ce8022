"""UI throughput: does the app slow the agent down, and does the screen keep up?

Runs one scripted run at full speed (1,000 tool calls, 10,000 `on_update` events and
long streamed text) twice: headless (the runtime alone) and with the app attached
(`App.run_test`, a real Textual app at 160x48 rendering to a headless driver). Prints
both times, their ratio, and how long after the last event the screen showed it.

    python benchmarks/ui_throughput.py [--turns 50] [--calls 20] [--updates 10] [--repeat 5]

Targets (issue #5): ratio at most 1.2; last update on screen within one second.
`--attribute` prints where the app's time goes, from what the app measures when it is
given a `workbench.widgets.screen_stats.ScreenStats`.
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

from textual import events  # noqa: E402

from benchmarks.workload import add_workload_arguments, workload_argv  # noqa: E402
from workbench import gc_policy  # noqa: E402
from workbench.agent import AgentToolResult, tool  # noqa: E402
from workbench.providers.scripted import Scenario  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402
from workbench.widgets.app import make_app  # noqa: E402
from workbench.widgets.screen_stats import ScreenStats  # noqa: E402

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
    """A bus listener noting how many events arrived, and when the first one, the last
    one and the run's end (`agent_end`) did. The agent's time is its first event to
    `agent_end`: what the screen does after the run is over is the lag, not the
    agent's time, and how the prompt reached the agent (a call, a key) is not either."""

    clock = staticmethod(time.perf_counter)
    """Read for every event (`ui_instructions.py` keeps it at the unslowed clock)."""

    def __init__(self, stats: ScreenStats | None = None) -> None:
        self.count = 0
        self.first = 0.0
        self.last = 0.0
        self.ended = 0.0
        self.stats = stats
        self.stats_at_end: ScreenStats | None = None
        """The app's figures at `agent_end` (with `stats`)."""

    def __call__(self, event, _signal=None) -> None:  # type: ignore[no-untyped-def]
        self.count += 1
        self.last = self.clock()
        if self.count == 1:
            self.first = self.last
        if event.type == "agent_end":
            self.ended = self.last
            if self.stats is not None:
                self.stats_at_end = self.stats.copy()
            if COLLECTIONS is not None:
                COLLECTIONS.on = False
            mark_window()


class Collections:
    """Garbage collection inside a run (`--attribute`): time and count, from the run's
    start to `agent_end` (Python's `gc.callbacks`)."""

    def __init__(self) -> None:
        self.on = False
        self.ms = 0.0
        self.count = 0
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, _info: dict) -> None:  # type: ignore[type-arg]
        if not self.on:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.ms += (time.perf_counter() - self._started) * 1000
            self.count += 1


COLLECTIONS: Collections | None = None


def timing_cost(calls: int = 20_000, rounds: int = 5) -> float:
    """What `ScreenStats.timed` adds to one listener call, in seconds: the timed
    wrapper around an empty listener against the bare one (the fastest of `rounds`
    each: one preempted run of the bare listener would make a difference negative)."""

    def empty(event, signal=None):  # type: ignore[no-untyped-def]
        return None

    timed = ScreenStats().timed(empty)

    def seconds(listener) -> float:  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        for _ in range(calls):
            listener(None, None)
        return time.perf_counter() - started

    fastest_timed = min(seconds(timed) for _ in range(rounds))
    fastest_empty = min(seconds(empty) for _ in range(rounds))
    return max((fastest_timed - fastest_empty) / calls, 0.0)


async def headless(args: argparse.Namespace, workspace: Path) -> tuple[float, int]:
    runtime = build(args, workspace)
    stamps = Stamps()
    runtime.agent.subscribe(stamps)
    with gc_policy.session_gc():  # the policy the app and `--headless` run under
        start_window()
        await runtime.agent.prompt("go")
    return stamps.ended - stamps.first, stamps.count


def start_window() -> None:
    if COLLECTIONS is not None:
        COLLECTIONS.on = True
    mark_window()


async def with_app(
    args: argparse.Namespace, workspace: Path, stats: ScreenStats | None = None
) -> tuple[float, float, int, ScreenStats | None]:
    """The run in the app: its time, the screen's lag, the events, and (with `stats`,
    which times every event: not for the ratio) what the app did from the start to
    `agent_end`."""
    runtime = build(args, workspace)
    app = make_app(runtime, prefill="go", stats=stats)
    stamps = Stamps(stats)
    runtime.agent.subscribe(stamps)  # before the app's own listener
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)  # start-up finishes (the footer builds after the first frame)
        before = stats.copy() if stats is not None else None
        start_window()
        app.post_message(events.Key("enter", None))  # send the prompt, as a person does
        while not stamps.ended:
            await asyncio.sleep(0.001)
        # the screen shows the last event once a refresh has synced the final state
        while app.pacer.synced < app.view_state.event_count:
            await asyncio.sleep(0.001)
        await pilot.pause()
        shown = time.perf_counter()
        assert app.view_state.run_state == "finished", app.view_state.run_state
    window = None
    if stamps.stats_at_end is not None and before is not None:
        window = stamps.stats_at_end - before
    return stamps.ended - stamps.first, shown - stamps.last, stamps.count, window


async def start_and_close_an_app(workspace: Path) -> None:
    """What the app run does before its run starts: build and mount an app, and wait.

    The headless run does it too, so both runs start on the same footing: a CPU that
    slows down under sustained load (this shared VM's does, see benchmarks/README.md)
    slows the run after the app's start-up, which is such a load.
    """
    workspace.mkdir()
    app = make_app(build(argparse.Namespace(turns=1, calls=1, updates=1, text=10), workspace))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)


def measure(args: argparse.Namespace, which: str) -> dict[str, float]:
    """One run, in this process: the agent's time (and, with the app, the screen's lag;
    with `--attribute`, where the time went)."""
    global COLLECTIONS
    if args.attribute and COLLECTIONS is None:
        COLLECTIONS = Collections()
    gc.collect()  # what an earlier run in this process left is not this run's to collect
    with tempfile.TemporaryDirectory() as tmp:
        if which == "headless":
            if not args.warm:
                asyncio.run(start_and_close_an_app(Path(tmp) / "warm-up"))
                gc.collect()
            seconds, events = asyncio.run(headless(args, Path(tmp)))
            result = {"seconds": seconds, "events": events}
        else:
            given = ScreenStats() if args.attribute else None
            seconds, lag, events, stats = asyncio.run(with_app(args, Path(tmp), given))
            result = {"seconds": seconds, "lag": lag, "events": events}
            if stats is not None:
                timing = stats.events * timing_cost() * 1000
                result |= {
                    "timing_ms": timing,
                    "listener_ms": stats.listener_seconds * 1000 - timing,
                    "refresh_ms": stats.refresh_seconds * 1000,
                    "refresh_count": stats.refreshes,
                    "paint_ms": stats.paint_seconds * 1000,
                    "paint_count": stats.painted,
                    "layout_count": stats.layouts,
                }
    if COLLECTIONS is not None:
        result |= {"gc_ms": COLLECTIONS.ms, "gc_count": COLLECTIONS.count}
    return result


def repeat_once(args: argparse.Namespace) -> list[dict[str, float]]:
    """headless, app, app, headless: a drift of the machine's speed within the repeat
    cancels out. Fresh (default): each run in a new interpreter, so the app's run is its
    first, cold caches and all. Warm: all four in one interpreter after one discarded
    run of each, like every run after the first in a session, except that each app
    run mounts a new app, which a session never does: every closed app leaves objects
    alive (Textual's `StylesCache` keeps its instances in a method's
    `lru_cache`), so later runs here carry a heap a session would not."""
    order = ["headless", "app", "app", "headless"]
    if args.warm:
        return [measure(args, which) for which in ["headless", "app", *order]][2:]
    return [in_subprocess(args, which) for which in order]


def in_subprocess(args: argparse.Namespace, which: str) -> dict[str, float]:
    command = [
        sys.executable,
        __file__,
        "--one",
        which,
        *workload_argv(args),
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
        "--attribute",
        action="store_true",
        help="instead of the ratio: where the app's time goes inside a run (see attribute)",
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
    """Print where the time goes inside runs the app measures (`ScreenStats`): medians
    of `--repeat` pairs of runs, from the run's start to `agent_end`."""
    pairs = [
        (in_subprocess(args, "headless"), in_subprocess(args, "app")) for _ in range(args.repeat)
    ]

    def median(which: int, key: str) -> float:
        return statistics.median(pair[which][key] for pair in pairs)

    run_ms, plain_ms = median(1, "seconds") * 1000, median(0, "seconds") * 1000
    print(
        f"inside the app's run: median of {args.repeat} measured runs, {run_ms:.0f} ms each "
        f"(headless {plain_ms:.0f} ms)"
    )
    rows = [
        (
            "fold (the app's bus listener)",
            median(1, "listener_ms"),
            f"timing's own {median(1, 'timing_ms'):.0f} ms taken off",
        ),
        (
            "refreshes (widgets brought up to date)",
            median(1, "refresh_ms"),
            f"{median(1, 'refresh_count'):.0f} of them",
        ),
        ("garbage collection", median(1, "gc_ms"), f"{median(1, 'gc_count'):.0f} collections"),
    ]
    for label, ms, note in rows:
        print(f"  {label:40s} {ms:6.1f} ms  {ms / run_ms:6.1%}  {note}")
    print(
        f"  {'refresh until painted':40s} {median(1, 'paint_ms'):6.1f} ms  (other work between "
        f"included; {median(1, 'paint_count'):.0f} paints, "
        f"{median(1, 'layout_count'):.0f} layouts of the screen)"
    )
    gc_headless = median(0, "gc_ms")
    print(
        f"  (garbage collection in the headless run: {gc_headless:.1f} ms, "
        f"{median(0, 'gc_count'):.0f} collections)"
    )
    own = run_ms - plain_ms
    named = median(1, "listener_ms") + median(1, "refresh_ms") + median(1, "gc_ms") - gc_headless
    print(
        f"the app's own work: {own:.0f} ms of the run, {own / run_ms:.1%} (a ratio of "
        f"{run_ms / plain_ms:.2f}); fold, refreshes and added collection {named:.0f} ms, "
        f"the rest ({own - named:.0f} ms) is Textual's layouts, paints and messages"
    )


if __name__ == "__main__":
    main()
