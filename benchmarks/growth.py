"""Growth: how the time and memory of each session operation grow with its length.

For scripted runs of about 1k, 10k and 100k events (and 1M with `--huge`), each
operation runs in its own process, as a person runs it:

- `headless`: `workbench --headless` on the scenario, recording the session, with the
  scripted model's simulated wire events off (as `RunOptions` and the other benchmarks
  have them), or on with `--wire` (as `workbench --headless` has them): each request
  event carries the whole transcript, as a real request does (the session records
  only the messages added since the previous request);
- `replay`: `ReplayApp` on that session in a headless Textual app (`App.run_test`,
  160x48), as `workbench replay` opens it (its first frame, then the file read and
  folded in a thread), until the first settled screen of the session (the app opens at
  the last event); then `Home`, `End` and `Left` three times, each timed until the screen
  is settled again (`jumps`: the slowest of them; each jump's CPU time is printed
  after the table too);
- `export-md`, `export-json`: `workbench export FILE --format md|json -o OUT`;
- `rerun`: `workbench rerun FILE --approve all --quiet`.

The scripted model writes 200 to 3,000 characters a turn (6 a delta, as the scripted
provider streams) and calls `read_file` once a turn, on a 40 KB file every 25th turn.

Time is the CPU time the operation's process used (user and system; `--wall` for
wall-clock time, which a busy shared machine moves by a factor of two or more); the
replay's is measured inside its process, from reading the file to the first settled
screen, without the imports; the jumps are wall-clock (what a person waits). Memory
is the process's peak resident set (`ru_maxrss`). The growth exponent of a
figure is the slope of log(figure - its value at the smallest size) against
log(events), over the larger sizes: the smallest run stands for the fixed cost
(interpreter, imports), so 1.0 is linear and 2.0 quadratic in the events handled.

    python benchmarks/growth.py                       # 1k, 10k, 100k
    python benchmarks/growth.py --huge                # and 1M (minutes)
    python benchmarks/growth.py --sizes 1k,100k --ops replay --keep /tmp/growth
    python benchmarks/growth.py --wire --ops headless,replay   # with the request events
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "720k": 720_000, "1M": 1_000_000}
OPS = ("headless", "replay", "export-md", "export-json", "rerun")
EVENTS_PER_TURN = 294
"""About how many events one turn of the workload makes (1,600 characters on average)."""
PARAGRAPH = (
    "A long session is mostly streamed text: the model thinks aloud, reads a file, "
    "and goes on. Each delta is one event on the bus and one line in the session. "
)


def text_length(turn: int) -> int:
    """200 to 3,000 characters, spread evenly and deterministically."""
    return 200 + (turn * 7919) % 2801


def make_scenario(turns: int) -> dict:
    big = "".join(f"line {i}: " + "x" * 70 + "\n" for i in range(500))  # about 40 KB
    small = "".join(f"small {i}\n" for i in range(20))
    script = []
    for turn in range(turns):
        n = text_length(turn)
        text = (PARAGRAPH * (n // len(PARAGRAPH) + 1))[:n]
        path = "big.txt" if turn % 25 == 24 else "small.txt"
        script.append(
            {"text": text, "tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}
        )
    script.append({"text": "done"})
    return {
        "name": "growth",
        "prompt": "read the files, again and again",
        "workspace_files": {"big.txt": big, "small.txt": small},
        "turns": script,
    }


def run_measured(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Run `argv` (output discarded); (seconds, peak resident MB). Raises if it fails."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    error = process.stderr.read()  # a pipe read to its end: the child has closed it
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):  # rerun exits 1 when something differs
        raise RuntimeError(f"{argv[3:6]} failed ({process.returncode}): {error.decode()[-2000:]}")
    if not WALL:
        seconds = usage.ru_utime + usage.ru_stime
    return seconds, usage.ru_maxrss / 1024


WALL = False
"""Report wall-clock time (`--wall`) instead of the CPU time the operation used."""
WIRE = False
"""Record the scripted model's simulated wire events (`--wire`)."""


def workbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def count_events(session: Path) -> int:
    with session.open("rb") as handle:
        return sum(1 for _ in handle) - 1


def measure_size(label: str, ops: list[str], work: Path) -> dict:
    turns = max(1, round(SIZES[label] / EVENTS_PER_TURN))
    folder = work / label
    folder.mkdir(parents=True, exist_ok=True)
    scenario = folder / "scenario.json"
    scenario.write_text(json.dumps(make_scenario(turns)))
    session = folder / "session.jsonl"
    row: dict = {"size": label, "turns": turns}
    if "headless" in ops or not session.exists():
        session.unlink(missing_ok=True)
        argv = [
            sys.executable,
            __file__,
            "--child-headless-wire" if WIRE else "--child-headless",
            "--headless",
            "--scenario",
            str(scenario),
            "--session",
            str(session),
            "--approve",
            "all",
            "--workspace",
            str(workspace(folder)),
        ]
        row["headless"] = run_measured(argv, folder)
    row["events"] = count_events(session)
    row["bytes"] = session.stat().st_size
    if "replay" in ops:
        out = folder / "replay.json"
        argv = [
            sys.executable,
            __file__,
            *(["--wall"] if WALL else []),
            "--child-replay",
            str(session),
            str(out),
        ]
        _, peak = run_measured(argv, folder)
        figures = json.loads(out.read_text())
        row["replay"] = (figures["open"], peak)
        row["jumps"] = figures["jumps"]
        row["jumps_cpu"] = figures.get("jumps_cpu", {})
        row["jump"] = (max(figures["jumps"].values()), peak)
    for fmt in ("md", "json"):
        if f"export-{fmt}" in ops:
            target = folder / f"export.{fmt}"
            argv = workbench("export", str(session), "--format", fmt, "-o", str(target))
            row[f"export-{fmt}"] = run_measured(argv, folder)
    if "rerun" in ops:
        argv = workbench(
            "rerun",
            str(session),
            "--approve",
            "all",
            "--quiet",
            "--workspace",
            str(workspace(folder)),
        )
        row["rerun"] = run_measured(argv, folder)
    return row


def workspace(folder: Path) -> Path:
    """A workspace with the scenario's files (the headless run reads them there)."""
    from workbench.providers.scripted import Scenario
    from workbench.scratch import seed

    root = folder / "workspace"
    root.mkdir(exist_ok=True)
    data = json.loads((folder / "scenario.json").read_text())
    seed(root, Scenario.model_validate(data).workspace_files)
    return root


# -- the children ---------------------------------------------------------------------


def headless_child(argv: list[str], wire: bool = False) -> int:
    """`workbench` with these arguments, with or without simulated wire events."""
    import dataclasses

    import workbench.cli.run_options as run_options
    from workbench.__main__ import main

    if wire:
        return main(argv)

    options_from_args = run_options.options_from_args

    def without_wire(*args):  # type: ignore[no-untyped-def]
        return dataclasses.replace(options_from_args(*args), simulated_wire=False)

    run_options.options_from_args = without_wire
    return main(argv)


# -- the replay child ------------------------------------------------------------------


async def replay_child(session_path: Path, out: Path) -> None:
    from textual import events

    from workbench.sessions.reader import read_session
    from workbench.widgets.replay_app import ReplayApp

    try:  # as `workbench replay` opens a session
        from workbench.sessions.scrub import ScrubFold
    except ImportError:  # before it could fold a session while reading it
        ScrubFold = None  # noqa: N806

    clock = time.perf_counter if WALL else time.process_time
    started = clock()
    if ScrubFold is None:
        app = ReplayApp(read_session(session_path))
    else:
        scrub = ScrubFold()
        try:  # the frame first, then the file read in a thread (`workbench replay` now)
            from workbench.cli.replay import session_reader

            app = ReplayApp(read=session_reader(session_path, scrub, lambda s: []), scrub=scrub)
        except ImportError:
            app = ReplayApp(read_session(session_path, scrub.feed), scrub=scrub)
    jumps: dict[str, float] = {}
    jumps_cpu: dict[str, float] = {}
    async with app.run_test(size=(160, 48)):
        while getattr(app, "session", None) is None:  # read after the first frame
            await asyncio.sleep(0.05)
        total = len(app.events)
        await settled(app, total)
        opened = clock() - started
        moves = [
            ("home", 0),
            ("end", total),
            ("left", total - 1),
            ("left", total - 2),
            ("left", total - 3),
        ]
        for number, (key, position) in enumerate(moves):
            begun, cpu = time.perf_counter(), time.process_time()
            app.post_message(events.Key(key, None))  # as the terminal driver sends it
            await settled(app, position)
            jumps[f"{number + 1}:{key}"] = time.perf_counter() - begun
            jumps_cpu[f"{number + 1}:{key}"] = time.process_time() - cpu
    out.write_text(json.dumps({"open": opened, "jumps": jumps, "jumps_cpu": jumps_cpu}))


async def settled(app, position: int) -> None:  # type: ignore[no-untyped-def]
    """Until the screen shows `position` and no drawing is under way."""
    while not (app.position == position and app.settled):
        await asyncio.sleep(0.001)


# -- the table ---------------------------------------------------------------------------


def exponent(rows: list[dict], op: str, which: int) -> str:
    """The fitted growth exponent of figure `which` (0 time, 1 memory) of `op`."""
    points = [(r["events"], r[op][which]) for r in rows if op in r]
    if len(points) < 3:
        return "-"
    base = points[0][1]
    pairs = [(math.log(n), math.log(v - base)) for n, v in points[1:] if v - base > 0]
    if len(pairs) < len(points) - 1:
        return "flat"
    if len(pairs) == 1:
        return "-"
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    slope = sum((x - mx) * (y - my) for x, y in pairs) / sum((x - mx) ** 2 for x, _ in pairs)
    return f"{slope:.2f}"


def print_table(rows: list[dict], ops: list[str]) -> None:
    columns = [
        op
        for op in ["headless", "replay", "jump", "export-md", "export-json", "rerun"]
        if op in ops or (op == "jump" and "replay" in ops)
    ]
    print("events      " + "".join(f"{op:>22}" for op in columns))
    for row in rows:
        cells = []
        for op in columns:
            seconds, peak = row[op]
            figure = f"{seconds * 1000:.0f} ms" if op == "jump" else f"{seconds:.2f} s"
            cells.append(f"{figure} {peak:.0f} MB".rjust(22))
        print(f"{row['events']:>10,}  " + "".join(cells))
    print(
        "exponent    "
        + "".join(f"{exponent(rows, op, 0) + ' / ' + exponent(rows, op, 1):>22}" for op in columns)
        + "   (time / memory)"
    )
    for row in rows:
        if "jumps" in row:
            cpu = row.get("jumps_cpu", {})
            detail = ", ".join(
                f"{k} {v * 1000:.0f}" + (f" ({cpu[k] * 1000:.0f})" if k in cpu else "")
                for k, v in row["jumps"].items()
            )
            print(f"jumps at {row['events']:,} events, ms wall (CPU): {detail}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="1k,10k,100k", help="comma-separated: 1k,10k,100k,720k,1M"
    )
    parser.add_argument("--huge", action="store_true", help="add the 1M-event size")
    parser.add_argument("--ops", default=",".join(OPS), help=f"comma-separated: {','.join(OPS)}")
    parser.add_argument("--keep", type=Path, help="work (and keep the sessions) in this folder")
    parser.add_argument(
        "--wall",
        action="store_true",
        help="wall-clock time instead of CPU time (which a busy shared machine moves less)",
    )
    parser.add_argument(
        "--wire", action="store_true", help="record the simulated wire events (model requests)"
    )
    parser.add_argument("--child-replay", nargs=2, type=Path, help=argparse.SUPPRESS)
    if sys.argv[1:2] in (["--child-headless"], ["--child-headless-wire"]):
        sys.exit(headless_child(sys.argv[2:], wire=sys.argv[1] == "--child-headless-wire"))
    args = parser.parse_args()
    global WALL, WIRE
    WALL = args.wall
    WIRE = args.wire
    if args.child_replay:
        asyncio.run(replay_child(*args.child_replay))
        return
    sizes = args.sizes.split(",") + (["1M"] if args.huge and "1M" not in args.sizes else [])
    ops = args.ops.split(",")
    unknown = [s for s in sizes if s not in SIZES] + [o for o in ops if o not in OPS]
    if unknown:
        parser.error(f"unknown sizes or operations: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="growth-") as tmp:
        work = args.keep or Path(tmp)
        rows = []
        for label in sizes:
            rows.append(measure_size(label, ops, work))
            print(
                f"measured {label}: {rows[-1]['events']:,} events, "
                f"{rows[-1]['bytes'] / 1e6:.1f} MB on disk",
                file=sys.stderr,
                flush=True,
            )
        print_table(rows, ops)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
