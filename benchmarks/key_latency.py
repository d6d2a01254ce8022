"""Key latency: how soon the app answers a key while a scripted run goes at full speed.

Runs the throughput workload (`benchmarks/workload.py`: streamed text, tool calls,
`on_update`s, no pacing) in the real app (`App.run_test`, 160x48), and while it runs
presses Tab every 100 ms, as the terminal driver sends it (`post_message` of a Key),
timing each press until the focus has moved. Prints the median and the slowest.

    python benchmarks/key_latency.py [--turns 50] [--calls 20] [--updates 10] [--text 2000]

Target (issue #19): every key answered within 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events  # noqa: E402

from benchmarks.ui_throughput import build  # noqa: E402
from benchmarks.workload import add_workload_arguments  # noqa: E402
from widgets.app import make_app  # noqa: E402


async def measure(args: argparse.Namespace, workspace: Path) -> tuple[list[float], float]:
    runtime = build(args, workspace)
    app = make_app(runtime, prefill="go")
    latencies: list[float] = []
    async with app.run_test(size=(args.width, args.height)) as pilot:
        await pilot.pause(0.3)
        started = time.perf_counter()
        app.post_message(events.Key("enter", None))  # send the prompt: the run starts
        while not runtime.agent.state.is_streaming:
            await asyncio.sleep(0.001)
        while runtime.agent.state.is_streaming:
            before = app.focused
            pressed = time.perf_counter()
            app.post_message(events.Key("tab", None))
            while app.focused is before and runtime.agent.state.is_streaming:
                await asyncio.sleep(0.001)
            if app.focused is not before:
                latencies.append(time.perf_counter() - pressed)
            await asyncio.sleep(0.1)
        seconds = time.perf_counter() - started
    return latencies, seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_workload_arguments(parser)
    parser.add_argument("--width", type=int, default=160)
    parser.add_argument("--height", type=int, default=48)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        latencies, seconds = asyncio.run(measure(args, Path(tmp)))
    if not latencies:
        print(f"the run took {seconds:.2f} s and no key was answered while it ran")
        return
    ms = sorted(x * 1000 for x in latencies)
    print(f"run: {seconds:.2f} s; {len(ms)} keys answered while it ran")
    print(
        f"key answered in: median {statistics.median(ms):.0f} ms, slowest {ms[-1]:.0f} ms "
        "(target: within 100 ms)"
    )


if __name__ == "__main__":
    main()
