"""The pytest plugin's cost: what an item adds to a re-run, and what `-n 2` buys.

    python benchmarks/pytest_plugin.py [--sessions 20] [--repeat 3]

Records the demo once (9 tool calls, a `run_command` among them) and copies it N
times into a temporary directory, then prints (wall clock, the fastest of --repeat):
- one `rerun()` in this process, warm (the work an item cannot avoid);
- `pytest` with the plugin on no sessions (its start-up), and on the N sessions with
  `-n 0` and `-n 2` (each a fresh process, as a developer runs it);
- the plugin's cost per item: (pytest on N - start-up) / N - one rerun().
Wall clock and CPU time (this process and its children) are both printed: the demo's
`run_command` sleeps 1.6 s, so a re-run waits more than it works.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
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


def fastest(repeat: int, run: object) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and its children), the fastest run."""
    times = []
    for _ in range(repeat):
        before = _cpu()
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append((time.perf_counter() - start, _cpu() - before))
    return min(times)


def _cpu() -> float:
    mine, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


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
    done = subprocess.run(command, cwd=directory.parent, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 5):  # 5: nothing collected (the empty directory)
        raise SystemExit(f"pytest failed:\n{done.stdout[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["WORKBENCH_SESSIONS_DIR"] = str(root / "recorded")
        runtime, _ = anyio.run(record_run, root / "ws")
        recorded = runtime.recorder.path
        flows, empty = root / "flows", root / "empty"
        flows.mkdir()
        empty.mkdir()
        for n in range(args.sessions):
            shutil.copy(recorded, flows / f"demo-{n:03}.jsonl")
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
        serial = fastest(args.repeat, lambda: pytest_run(flows, "-n", "0"))
        parallel = fastest(args.repeat, lambda: pytest_run(flows, "-n", "2"))
    n = args.sessions
    print(f"sessions: {n} copies of the demo (9 calls each); cores: {os.cpu_count()}")
    print("                                     wall ms     CPU ms")
    for label, (wall, cpu) in (
        ("one rerun() in process, warm", direct),
        ("pytest + plugin, no sessions", start_up),
        ("pytest --workbench-sessions, -n 0", serial),
        ("pytest --workbench-sessions, -n 2", parallel),
    ):
        print(f"{label:<35}{wall * 1000:9.0f}  {cpu * 1000:9.0f}")
    wall, cpu = ((serial[i] - start_up[i]) / n for i in (0, 1))
    print(f"{'per item (-n 0, after start-up)':<35}{wall * 1000:9.0f}  {cpu * 1000:9.0f}")
    print(
        f"{'  of which the plugin (item - rerun)':<35}{(wall - direct[0]) * 1000:9.0f}  "
        f"{(cpu - direct[1]) * 1000:9.0f}"
    )


if __name__ == "__main__":
    main()
