"""What the scripted model's simulated wire events cost a long run.

Each simulated request carries the whole transcript as a real one would, so a run of
N turns builds N bodies of up to N turns: quadratic. The command line turns them on
(the demo is five turns); `RunOptions` leaves them off, and so do the other benchmarks.

    python benchmarks/simulated_wire.py [--calls 20] [--repeat 3]

Prints the headless run time of the ui_throughput workload with and without them.
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

from benchmarks.ui_throughput import make_scenario, make_tool  # noqa: E402
from workbench import gc_policy  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402


async def run_once(turns: int, calls: int, wire: bool) -> float:
    with tempfile.TemporaryDirectory() as directory:
        runtime = build_runtime(
            RunOptions(
                scenario=make_scenario(turns, calls, 2000),
                workspace=Path(directory),
                pace=math.inf,
                tools=[make_tool(10)],
                allow=["chatty"],
                record=False,
                simulated_wire=wire,
            )
        )
        with gc_policy.session_gc():
            start = time.perf_counter()
            await runtime.agent.prompt("go")
            return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for turns in (5, 50, 200):
        row = []
        for wire in (False, True):
            times = [asyncio.run(run_once(turns, args.calls, wire)) for _ in range(args.repeat)]
            row.append(statistics.median(times) * 1000)
        print(
            f"{turns:4d} turns x {args.calls} calls: {row[0]:7.0f} ms without, "
            f"{row[1]:7.0f} ms with simulated wire events ({row[1] / row[0]:.1f}x)"
        )


if __name__ == "__main__":
    main()
