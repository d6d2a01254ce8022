"""Workspace checkpoints: what they cost a run, and how big the blob store grows.

    python benchmarks/checkpoints.py [--files 1000] [--runs 5]

Runs the demo scenario recorded with and without checkpoints, then a scripted run
in a workspace of N files (2 KB each) whose command changes 10 of them, and prints
wall-clock time (the first run and the fastest of `--runs`), the blob store's size and how long
one manifest, one scan with 10 changes and one scan with none take.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.checkpointer import Checkpointer  # noqa: E402
from workbench.providers.scripted import Scenario  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402
from workbench.scratch import seed  # noqa: E402
from workbench.sessions.blobs import store_for  # noqa: E402
from workbench.workspace_scan import CheckpointCaps  # noqa: E402


def cpu() -> float:
    return time.perf_counter()  # wall clock: the scans run in a worker thread


def run(scenario: Scenario, workspace: Path, sessions: Path, on: bool) -> tuple[float, Path]:
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=workspace,
            pace=math.inf,
            approve="all",
            session=sessions / f"{time.time_ns()}.jsonl",
            checkpoints=CheckpointCaps(enabled=on),
        )
    )
    start = cpu()
    anyio.run(runtime.agent.prompt, runtime.prompt)
    spent = cpu() - start
    runtime.recorder.close()
    return spent, runtime.session_path


def fastest(runs: int, make: object) -> tuple[float, float]:
    """(the first run's time, the fastest run's)."""
    times = [make() for _ in range(runs)]  # type: ignore[operator]
    return times[0], min(times)


def demo(runs: int, base: Path) -> None:
    scenario = Scenario.load("demo")
    for on in (False, True):
        sessions = base / f"demo-{on}"

        def once(sessions: Path = sessions, on: bool = on) -> float:
            workspace = Path(tempfile.mkdtemp(dir=base))
            seed(workspace, scenario.workspace_files)
            return run(scenario, workspace, sessions, on)[0]

        first, best = fastest(runs, once)
        blobs, size = store_for(sessions / "x.jsonl").size()
        label = "with checkpoints" if on else "without"
        print(
            f"demo, {label:>16}: {best * 1000:6.1f} ms a run (first {first * 1000:.1f}); "
            f"after {runs} runs the store holds {blobs} blobs, {size} bytes"
        )


def many_files(count: int, runs: int, base: Path) -> None:
    workspace = base / "big"
    for i in range(count):
        path = workspace / f"d{i % 20}" / f"f{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(1024).hex().encode())
    scenario = Scenario.model_validate(
        {
            "name": "many",
            "prompt": "go",
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "run_command",
                            "arguments": {
                                "command": "for i in 0 1 2 3 4 5 6 7 8 9; do "
                                "echo $RANDOM >> d0/f$((i*20)).txt; done"
                            },
                        }
                    ]
                },
                {
                    "tool_calls": [
                        {"name": "write_file", "arguments": {"path": "new.txt", "content": "x"}}
                    ]
                },
                {"text": "done"},
            ],
        }
    )
    sessions = base / "many-sessions"
    for on in (False, True):
        first, best = fastest(runs, lambda on=on: run(scenario, workspace, sessions, on)[0])
        label = "with checkpoints" if on else "without"
        print(f"{count} files, {label:>16}: {best * 1000:6.1f} ms a run (first {first * 1000:.1f})")
    blobs, size = store_for(sessions / "x.jsonl").size()
    files = sum(p.stat().st_size for p in workspace.rglob("*") if p.is_file())
    print(
        f"{count} files ({files} bytes): after {2 * runs} runs the store holds {blobs} blobs, "
        f"{size} bytes"
    )

    class Sink:
        path = base / "fresh" / "probe.jsonl"
        recording = True

        def write_record(self, _record: object) -> None:
            pass

    checkpointer = Checkpointer(Sink(), None, workspace, CheckpointCaps())
    for label, work in (
        ("manifest into an empty store", lambda: checkpointer._manifest("", None)),
        ("manifest again (every blob already stored)", lambda: checkpointer._manifest("", None)),
        ("scan, nothing changed", lambda: checkpointer._scan("", None)),
    ):
        start = time.perf_counter()
        work()
        print(f"{count} files, {label}: {(time.perf_counter() - start) * 1000:.1f} ms")
    for i in range(10):
        with (workspace / "d0" / f"f{i * 20}.txt").open("a") as handle:
            handle.write("changed\n")
    start = time.perf_counter()
    change = checkpointer._scan("", None)
    took = (time.perf_counter() - start) * 1000
    print(f"{count} files, scan with {len(change.files)} changed: {took:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        demo(args.runs, Path(base))
        many_files(args.files, args.runs, Path(base))


if __name__ == "__main__":
    main()
