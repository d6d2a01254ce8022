"""First usable screen, in a real terminal: the workbench beside a minimal Textual app.

Each app runs as a person runs it, as its own command in a fresh tmux window of
160x48; the pane is read (`tmux capture-pane`) every 10 ms from the moment the
command starts until what a person waits for is on it:

- `minimal`: a Header, a Static ("minimal app ready") and a Footer: its first frame;
- `live`: `workbench --no-record` (the demo) until the demo's prompt is in the
  message box (a starting screen does not count);
- `replay FILE`: `workbench replay FILE` until the main screen shows an event (the
  scrubber's "event N / M"), and then until it is settled at the last event
  ("event M / M").

The minimal app and the workbench are started alternately, `--repeat` times each;
the medians are compared (the ratio is the workbench's median over the minimal
app's). Reading the pane costs a little CPU, the same for both.

    python benchmarks/first_screen.py live [--repeat 5]
    python benchmarks/first_screen.py replay SESSION.jsonl [--repeat 5]
    python benchmarks/first_screen.py live --tree /tmp/before --tree .   # compare trees

Targets (issue 34): the usable screen at most 1.5 times the minimal app's first
screen, live and in replay (300 and 100,000 events); replay settled at the last event
within 1 s more.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SIZE = (160, 48)
POLL = 0.01
TIMEOUT = 60.0

MINIMAL = """
from textual.app import App
from textual.widgets import Footer, Header, Static


class Minimal(App):
    def compose(self):
        yield Header()
        yield Static("minimal app ready")
        yield Footer()


Minimal().run()
"""


TMUX = ("tmux", "-L", f"wb-first-screen-{os.getpid()}")
"""A tmux server of this benchmark's own (a keeper session holds it up between runs)."""


def pane(name: str) -> str:
    done = subprocess.run(
        [*TMUX, "capture-pane", "-p", "-t", name], capture_output=True, text=True, check=False
    )
    return done.stdout


def timed(command: str, cwd: Path, markers: list[str]) -> list[float]:
    """Seconds from starting `command` in a new tmux window until each marker (in
    order) is on its screen."""
    name = "measured"
    width, height = SIZE
    started = time.perf_counter()
    subprocess.run(
        [
            *(*TMUX, "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height)),
            *("-c", str(cwd), command),
        ],
        check=True,
    )
    seen: list[float] = []
    try:
        while len(seen) < len(markers):
            if time.perf_counter() - started > TIMEOUT:
                raise TimeoutError(f"{markers[len(seen)]!r} not on screen after {TIMEOUT:.0f} s")
            screen = pane(name)
            while len(seen) < len(markers) and markers[len(seen)] in screen:
                seen.append(time.perf_counter() - started)
            time.sleep(POLL)
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True, check=False)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("mode", choices=("live", "replay"))
    parser.add_argument("session", nargs="?", type=Path, help="replay: the session file")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--tree",
        type=Path,
        action="append",
        help="run the workbench of this source tree (repeat to compare trees, alternating; "
        "default: the installed `workbench` command)",
    )
    args = parser.parse_args()
    if args.mode == "replay" and args.session is None:
        parser.error("replay needs a SESSION file")
    subprocess.run([*TMUX, "new-session", "-d", "-s", "keeper", "sleep 86400"], check=True)
    try:
        minimal, found, names = _measure(args)
    finally:
        subprocess.run([*TMUX, "kill-server"], capture_output=True, check=False)
    base = statistics.median(minimal)
    print(f"{args.repeat} runs each, alternating, in tmux at {SIZE[0]}x{SIZE[1]}; medians")
    print(f"minimal Textual app, first screen:   {base:6.2f} s  ({_spread(minimal)})")
    for label, by_marker in found.items():
        print(label)
        for name, times in zip(names, by_marker, strict=True):
            median = statistics.median(times)
            print(
                f"  {name + ':':<36}{median:6.2f} s  ({_spread(times)})  ratio {median / base:.2f}"
            )


def _commands(args: argparse.Namespace, tail: str) -> dict[str, str]:
    """The workbench command line of each tree to measure, by label."""
    if not args.tree:
        return {"workbench (installed)": f"{shlex.quote(str(BIN / 'workbench'))} {tail}"}
    python = shlex.quote(sys.executable)
    entry = shlex.quote("import sys; from workbench.__main__ import main; sys.exit(main())")
    return {
        f"workbench ({tree})": (
            f"env PYTHONPATH={shlex.quote(str(tree.resolve()))} {python} -c {entry} {tail}"
        )
        for tree in args.tree
    }


def _measure(
    args: argparse.Namespace,
) -> tuple[list[float], dict[str, list[list[float]]], list[str]]:
    python = shlex.quote(sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "minimal.py").write_text(MINIMAL)
        minimal_cmd = f"{python} minimal.py"
        if args.mode == "live":
            from workbench.providers.scripted import Scenario

            prompt = Scenario.load("demo").prompt
            commands = _commands(args, "--no-record")
            markers = [prompt[:40]]
            names = ["demo prompt in the message box"]
        else:
            from workbench.sessions.reader import read_session

            total = len(read_session(args.session).events)
            commands = _commands(args, f"replay {shlex.quote(str(args.session.resolve()))}")
            markers = [f" / {total}", f"event {total} / {total}"]  # the scrubber
            names = ["an event on the main screen", f"settled at the last event ({total:,})"]
        minimal: list[float] = []
        found: dict[str, list[list[float]]] = {label: [[] for _ in markers] for label in commands}
        runs: list[str | None] = [None, *commands]  # None: the minimal app
        for i in range(args.repeat):
            for label in runs if i % 2 == 0 else runs[::-1]:
                if label is None:
                    minimal += timed(minimal_cmd, work, ["minimal app ready"])
                    continue
                seen = timed(commands[label], work, markers)
                for into, t in zip(found[label], seen, strict=True):
                    into.append(t)
    return minimal, found, names


def _spread(times: list[float]) -> str:
    return f"{min(times):.2f}-{max(times):.2f}"


if __name__ == "__main__":
    main()
