"""Start-up: how long until the first frame, the workbench beside a minimal Textual app.

Each app starts in a fresh interpreter, as `workbench` does (the workbench through
its entry module, on the demo scenario, recording off), in a headless Textual driver at
160x48; the time is from starting the process to the end of the app's first screen
refresh (a callback queued with `call_after_refresh` as the app starts). The
workbench's first frame is its starting screen; it then builds the runtime and shows
the main screen, whose time is printed too. The two apps are run alternately,
`--repeat` times each, and the medians compared.

    python benchmarks/startup.py [--repeat 7]

Target (issue #19): the workbench's first frame within 1 s, and at most 1.5 times the
minimal app's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import asyncio, json, sys, time
which = sys.argv[1]
if which == "minimal":
    from textual.app import App
    from textual.widgets import Footer, Header, Static

    class Minimal(App):
        def compose(self):
            yield Header()
            yield Static("hello")
            yield Footer()

    app = Minimal()
else:  # what `workbench --no-record` runs: its entry module, then the app, which
    # builds the runtime after its first frame
    from workbench.cli.run_options import runtime_of
    from workbench.cli.args import build_parser
    from workbench.widgets.app import make_app

    args = build_parser().parse_args(["--no-record"])
    app = make_app(start=lambda: runtime_of(args, False, "ask", lambda note: None))

async def main():
    done = asyncio.Event()
    async with app.run_test(size=(160, 48)) as pilot:
        app.call_after_refresh(done.set)
        await done.wait()
        frame = time.time()
        if which != "minimal":  # until the main screen is up and shows the demo
            while getattr(app, "main", None) is None:
                await asyncio.sleep(0.005)
            await app.main.mounted.wait()
            await pilot.pause()
        print(json.dumps({"frame": frame, "ready": time.time()}))

asyncio.run(main())
"""


def start_up(which: str) -> tuple[float, float]:
    """Seconds from starting the process to its first frame, and to its main screen."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, which], capture_output=True, text=True, env=env, check=True
    )
    times = json.loads(done.stdout.splitlines()[-1])
    return times["frame"] - started, times["ready"] - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    minimal, workbench, ready = [], [], []
    for _ in range(args.repeat):
        minimal.append(start_up("minimal")[0])
        frame, shown = start_up("workbench")
        workbench.append(frame)
        ready.append(shown)
    m, w = statistics.median(minimal), statistics.median(workbench)
    print(f"minimal Textual app: first frame after {m:.2f} s (median of {args.repeat})")
    print(f"workbench:           first frame after {w:.2f} s (median of {args.repeat})")
    print(f"ratio:               {w / m:.2f}   (targets: workbench under 1 s, ratio at most 1.5)")
    print(f"workbench:           main screen up after {statistics.median(ready):.2f} s")


if __name__ == "__main__":
    main()
