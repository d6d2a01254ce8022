"""Start-up: how long until the first frame, the workbench beside a minimal Textual app.

Each app starts in a fresh interpreter, as `workbench` does (the workbench through
its entry module, on the demo scenario, recording off), in a headless Textual driver at
160x48; the time is from starting the process to the end of the app's first screen
refresh (a callback queued with `call_after_refresh` as the app starts). The two are
run alternately, `--repeat` times each, and the medians compared.

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
else:  # what `workbench` runs: its entry module, then the app on the demo scenario
    import workbench.__main__  # noqa: F401
    from widgets.app import make_app
    from workbench.runtime import RunOptions, build_runtime

    app = make_app(build_runtime(RunOptions(record=False)))

async def main():
    done = asyncio.Event()
    async with app.run_test(size=(160, 48)):
        app.call_after_refresh(done.set)
        await done.wait()
        print(json.dumps({"frame": time.time()}))

asyncio.run(main())
"""


def first_frame(which: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, which], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])["frame"] - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    minimal, workbench = [], []
    for _ in range(args.repeat):
        minimal.append(first_frame("minimal"))
        workbench.append(first_frame("workbench"))
    m, w = statistics.median(minimal), statistics.median(workbench)
    print(f"minimal Textual app: first frame after {m:.2f} s (median of {args.repeat})")
    print(f"workbench:           first frame after {w:.2f} s (median of {args.repeat})")
    print(f"ratio:               {w / m:.2f}   (targets: workbench under 1 s, ratio at most 1.5)")


if __name__ == "__main__":
    main()
