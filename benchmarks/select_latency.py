"""Select latency: how long from picking a call until the screen shows it in the inspector.

Runs the built-in demo to its end in a real Textual app (160x48, headless driver),
then selects every call in turn, `--rounds` times over, and for each selection notes
the time until the screen has painted it and settled (the frame after the first
paint too: a call of another shape lays the screen out again once its sections have
been resized), and how many layouts of the screen it took.

    python benchmarks/select_latency.py [--rounds 5] [--size 160x48]

No target in the issue; the figure to bring down is the layouts (each one lays out
and repaints the whole screen).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events  # noqa: E402

from workbench.providers.scripted import Scenario  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402
from workbench.scratch import seed  # noqa: E402
from workbench.widgets.app import make_app  # noqa: E402
from workbench.widgets.screen_stats import ScreenStats  # noqa: E402


async def settled(app) -> None:  # type: ignore[no-untyped-def]
    """Two frames painted: the selection's own, and any layout it set off."""
    for _ in range(2):
        painted = asyncio.Event()
        app.call_after_refresh(painted.set)
        await painted.wait()


async def measure(
    rounds: int, size: tuple[int, int], workspace: Path
) -> tuple[list[float], list[int]]:
    scenario = Scenario.load("demo")
    seed(workspace, scenario.workspace_files)
    runtime = build_runtime(
        RunOptions(
            scenario=scenario, workspace=workspace, pace=math.inf, approve="all", record=False
        )
    )
    stats = ScreenStats()
    app = make_app(runtime, stats=stats)
    seconds: list[float] = []
    layouts: list[int] = []
    async with app.run_test(size=size) as pilot:
        app.post_message(events.Key("enter", None))  # send the demo's prompt
        while app.view_state.run_state not in ("finished", "error", "aborted"):
            await pilot.pause(0.05)
        await pilot.pause(0.5)  # the end of the run is on screen
        calls = list(app.view_state.calls)
        for _ in range(rounds):
            for call_id in calls:
                before, started = stats.layouts, time.perf_counter()
                app.select_call(call_id)
                await settled(app)
                seconds.append(time.perf_counter() - started)
                layouts.append(stats.layouts - before)
    return seconds, layouts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", default="160x48", help="the terminal, WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        seconds, layouts = asyncio.run(measure(args.rounds, (width, height), Path(tmp)))
    ms = sorted(s * 1000 for s in seconds)
    print(f"{len(ms)} selections of the demo's calls at {width}x{height}")
    print(
        f"until painted and settled: {statistics.median(ms):.0f} ms "
        f"(median; {ms[0]:.0f} to {ms[-1]:.0f})"
    )
    print(f"layouts of the screen:     {statistics.mean(layouts):.1f} a selection (mean)")


if __name__ == "__main__":
    main()
