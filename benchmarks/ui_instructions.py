"""UI throughput in instructions: `ui_throughput.py`'s workload counted, not timed.

This VM's speed wanders by a quarter from one second to the next, so the wall-clock
ratio needs dozens of repeats and still moves by a tenth. Callgrind (valgrind) counts
the instructions the interpreter executes: the same count for the same run, whatever
else the machine is doing. This runs `ui_throughput.py`'s headless run and its app
run once each under callgrind, counts the instructions from the run's start to its
`agent_end` (the window the wall-clock ratio times) and prints both and their ratio.

What a count leaves out is time that is not instructions: cache misses and the like,
most of them from the garbage collector walking objects that are not in the cache
(callgrind's --cache-sim shows where), so the fewer objects the app keeps alive, the
closer the wall-clock ratio comes to this one.

The clock: under callgrind Python runs many times slower, so the app's pacing
(refreshes so many milliseconds apart) would refresh that many times as often per
instruction as it does natively. The run under callgrind slows its clock by as much
(`--clock-factor`: what a fixed loop shows on the machine; measuring it at each run
would only add the machine's noise). The count is exact; where the refreshes fall
still follows the clock, so two counts of the same code can differ by a refresh or
so when the machine's speed wanders during one of them (a machine shared with other
work slows the run against the wall clock, so the app refreshes more often per
instruction: compare counts taken side by side).

    python benchmarks/ui_instructions.py [--turns 50] [--calls 20] [--updates 10] [--text 2000]

Needs valgrind, and a Python built with its symbols (callgrind marks the window by
dumping its counts at each call of `os.getppid()`, the C function `os_getppid`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.workload import add_workload_arguments, workload_argv  # noqa: E402

CLOCK_FACTOR = 55.0
"""How many times slower Python runs under callgrind on the development box (a fixed
loop, see benchmarks/README.md)."""


def slow_clock(factor: float, clock: Callable[[], float]) -> Callable[[], float]:
    """`clock`, running `factor` times slower from now on."""
    origin = clock()
    return lambda: origin + (clock() - origin) / factor


def window_instructions(directory: Path) -> int:
    """The instructions between the two marks, from callgrind's dumps in `directory`:
    part 1 runs up to the first mark, part 2 is the window, the last part the rest."""
    parts = sorted(directory.glob("callgrind.*.*"))
    if len(parts) != 2:
        raise SystemExit(
            f"ui_instructions: expected 2 marks, callgrind dumped {len(parts)} parts "
            "(is this Python built with symbols? does something else call os.getppid?)"
        )
    window = next(p for p in parts if p.name.endswith(".2"))
    for line in window.read_text(errors="replace").splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise SystemExit(f"ui_instructions: no totals in {window}")


def child(args: argparse.Namespace) -> None:
    """Under callgrind: slow the clock, then run one measured run with its marks."""
    native = time.perf_counter
    time.perf_counter = slow_clock(args.clock_factor, native)  # before Textual binds it
    time.monotonic = slow_clock(args.clock_factor, time.monotonic)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import ui_throughput

    ui_throughput.WINDOW_MARK = os.getppid
    # Read for every event, the slowed clock would add as many instructions to both
    # runs; the times are not wanted here.
    ui_throughput.Stamps.clock = staticmethod(native)
    run = argparse.Namespace(**vars(args), warm=False, attribute=False)
    result = ui_throughput.measure(run, args.child)
    print(json.dumps({"events": result["events"]}))


def count_both(args: argparse.Namespace) -> list[tuple[int, dict]]:
    """Both runs under callgrind at once (one core each): (instructions, what the run
    printed) for the headless run, then the app run."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for which in ("headless", "app"):
            folder = Path(tmp) / which
            folder.mkdir()
            command = [
                "valgrind",
                "--tool=callgrind",
                "--dump-before=os_getppid",
                f"--callgrind-out-file={folder}/callgrind.%p",
                sys.executable,
                __file__,
                "--child",
                which,
                "--clock-factor",
                repr(args.clock_factor),
                *workload_argv(args),
            ]
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            runs.append((which, folder, process))
        results = []
        for which, folder, process in runs:
            out, err = process.communicate()
            if process.returncode != 0:
                raise SystemExit(f"ui_instructions: the {which} run failed:\n{err[-2000:]}")
            results.append((window_instructions(folder), json.loads(out.splitlines()[-1])))
        return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_workload_arguments(parser)
    parser.add_argument("--child", choices=["headless", "app"], help=argparse.SUPPRESS)
    parser.add_argument(
        "--clock-factor",
        type=float,
        default=CLOCK_FACTOR,
        help=f"how much the clock is slowed under callgrind (default {CLOCK_FACTOR:.0f})",
    )
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("ui_instructions: needs valgrind (Debian: apt install valgrind)")
    calls = args.turns * args.calls
    print(
        f"{calls} tool calls, {calls * args.updates} on_update events, "
        f"{args.turns * args.text:,} characters of streamed text; instructions counted "
        "by callgrind from the run's start to agent_end"
    )
    (headless, info), (app, _) = count_both(args)
    print(f"events per run:          {info['events']:,}")
    print(f"headless:                {headless:,} instructions")
    print(f"with the app attached:   {app:,} instructions")
    print(f"ratio:                   {app / headless:.3f}   (target for the times: <= 1.2)")
    print(f"clock slowed by:         {args.clock_factor:g} (--clock-factor)")


if __name__ == "__main__":
    main()
