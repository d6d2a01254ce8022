"""The pytest plugin's cost: what an item adds to a re-run, and what `-n 2` buys.

    python benchmarks/pytest_plugin.py [--sessions 12 24] [--repeat 3] [--clean]

Records the demo once (9 tool calls, a `run_command` among them) and copies it N
times into a temporary directory, then prints:
- one `rerun()` in this process, warm (the work an item cannot avoid; fastest of
  --repeat);
- `pytest` with the plugin on no sessions (its start-up; fastest of --repeat);
- for each N: `pytest --workbench-sessions` with `-n 0` and `-n 2`, each a fresh
  process as a developer runs it, the two alternating --repeat times (medians);
- the plugin's cost per item: (pytest on N - start-up) / N - one rerun().
Wall clock and CPU time (this process and its children) are both printed: the demo's
`run_command` sleeps 1.6 s, so a re-run waits more than it works.

`--clean` runs pytest with only the plugins this needs (`PYTEST_DISABLE_PLUGIN_AUTOLOAD`
and `-p xdist.plugin`), as in a project that installs agent-workbench and
pytest-xdist; without it every plugin of this environment loads in every process
(hypothesis, textual-snapshot, syrupy...: seconds of start-up for each xdist worker).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.sessions.helpers import record_run  # noqa: E402
from workbench.scratch import scratch_workspace  # noqa: E402
from workbench.session_runs import rerun, scenario_of  # noqa: E402
from workbench.sessions.reader import read_session  # noqa: E402


def timed(run: object) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and its children) of one run."""
    before = _cpu()
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start, _cpu() - before


def fastest(repeat: int, run: object) -> tuple[float, float]:
    """`timed`, the fastest of `repeat` runs."""
    return min(timed(run) for _ in range(repeat))


def median(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def _cpu() -> float:
    mine, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


CLEAN = False
"""Only the plugins this needs (see the module)."""


def pytest_run(directory: Path, *extra: str) -> None:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "workbench.pytest_plugin",
        "-p",
        "no:cacheprovider",
        "--workbench-sessions",
        str(directory),
        "--workbench-approve",
        "all",
        *extra,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if CLEAN:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        command += ["-p", "xdist.plugin"]
    done = subprocess.run(command, cwd=directory.parent, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 5):  # 5: nothing collected (the empty directory)
        raise SystemExit(f"pytest failed:\n{done.stdout[-2000:]}")


def main() -> None:
    global CLEAN
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, nargs="+", default=[12, 24])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clean", action="store_true", help="only the plugins this needs")
    args = parser.parse_args()
    CLEAN = args.clean
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["WORKBENCH_SESSIONS_DIR"] = str(root / "recorded")
        runtime, _ = anyio.run(record_run, root / "ws")
        recorded = runtime.recorder.path
        empty = root / "empty"
        empty.mkdir()
        session = read_session(recorded)
        scenario = scenario_of(session)

        async def once() -> None:
            report = await rerun(
                session, approve="all", workspace=scratch_workspace(scenario, parent=root)
            )
            assert not report.differs

        anyio.run(once)  # warm
        direct = fastest(args.repeat, lambda: anyio.run(once))
        start_up = fastest(args.repeat, lambda: pytest_run(empty))
        plugins = "only the plugins needed" if CLEAN else "every plugin installed"
        print(f"cores: {os.cpu_count()}; {plugins}; the demo: 9 calls a session")
        print("                                          wall ms     CPU ms")
        for label, (wall, cpu) in (
            ("one rerun() in process, warm", direct),
            ("pytest + plugin, no sessions", start_up),
        ):
            print(f"{label:<40}{wall * 1000:9.0f}  {cpu * 1000:9.0f}")
        for n in args.sessions:
            flows = root / f"flows-{n}"
            flows.mkdir()
            for k in range(n):
                shutil.copy(recorded, flows / f"demo-{k:03}.jsonl")
            runs: dict[str, list[tuple[float, float]]] = {"0": [], "2": []}
            for _ in range(args.repeat):  # alternating, so both see the same load
                for workers in runs:
                    runs[workers].append(timed(lambda w=workers, f=flows: pytest_run(f, "-n", w)))
            serial, parallel = median(runs["0"]), median(runs["2"])
            for label, (wall, cpu) in (
                (f"{n} sessions, -n 0 (median of {args.repeat})", serial),
                (f"{n} sessions, -n 2 (median of {args.repeat})", parallel),
            ):
                print(f"{label:<40}{wall * 1000:9.0f}  {cpu * 1000:9.0f}")
            print(f"{'  -n 2 / -n 0, wall':<40}{parallel[0] / serial[0]:9.2f}")
            wall, cpu = ((serial[i] - start_up[i]) / n for i in (0, 1))
            print(f"{'  per item (-n 0, after start-up)':<40}{wall * 1000:9.0f}  {cpu * 1000:9.0f}")
            print(
                f"{'    of which the plugin (item - rerun)':<40}"
                f"{(wall - direct[0]) * 1000:9.0f}  {(cpu - direct[1]) * 1000:9.0f}"
            )


if __name__ == "__main__":
    main()
