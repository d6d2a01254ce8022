"""The session library's cold index on a library of realistic sessions (issue 34).

    python benchmarks/cold_index.py [--sessions 2000] [--dir DIR] [--repeat 5]

Records a few real runs of scripted scenarios (streamed thinking and text, parallel
and sequential tool calls, file writes with workspace checkpoints, a denial-free
approve-all gate: what the recorder writes for a run in the app, 50-110 KB each),
then copies them N times, each copy with its own marker word (`mk000042`) in the
prompt, the replies, the arguments and the results, so every session can be found
on its own. A directory given with --dir is reused if it already holds them.

It then times, `--repeat` times with the index deleted before each (the median is
printed, wall clock and the process's CPU): `Library.refresh` from nothing (what
`workbench sessions --search` waits for on a fresh folder), and the whole command
`workbench sessions --search MARKER --dir DIR --json` from nothing (Python's start
and imports included); then, with the index built, the refresh with nothing changed
and searches for one session's marker, a written file's path and a common word.

Sessions written by an older workbench (no summary line) are timed too, with
`--legacy` (the summary lines stripped from the copies).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.providers.scripted import Scenario  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402
from workbench.scratch import seed  # noqa: E402
from workbench.sessions.library import INDEX_NAME, Library  # noqa: E402
from workbench.sessions.summary_line import MARKER  # noqa: E402

MARK = "mk000000"
"""The placeholder every template holds; each copy replaces it (same length, so the
byte offsets a summary line records stay true)."""

PARAGRAPH = (
    "The configuration loader reads {m} settings from the project file, then the "
    "environment; a missing key falls back to the default and a wrong type is an "
    "error that names the key. "
)


def _scenario(turns: int, width: int) -> dict[str, Any]:
    files = {
        f"src/mod{i}.py": f"# module {i} of {MARK}\n" + "def f():\n    return 1\n" * width
        for i in range(4)
    }
    files["notes.md"] = PARAGRAPH.format(m=MARK) * width
    script: list[dict[str, Any]] = []
    for turn in range(turns):
        script.append(
            {
                "thinking": PARAGRAPH.format(m=MARK),
                "text": f"Step {turn}: " + PARAGRAPH.format(m=MARK),
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": f"src/mod{turn % 4}.py"}},
                    {"name": "search_files", "arguments": {"pattern": MARK, "path": "."}},
                    {
                        "name": "write_file",
                        "arguments": {
                            "path": f"out/step{turn}.txt",
                            "content": f"{MARK} step {turn}\n" * width,
                        },
                    },
                ],
            }
        )
    script.append({"text": f"Done with {MARK}: " + PARAGRAPH.format(m=MARK) * 2})
    return {
        "name": f"bench-{turns}",
        "prompt": f"Find every use of {MARK} in the project and write a note per step.",
        "workspace_files": files,
        "turns": script,
    }


TEMPLATES = ((1, 2), (1, 3), (2, 2), (3, 2))


async def _record(workspace: Path, session: Path, data: dict[str, Any]) -> None:
    loaded = Scenario.model_validate(data)
    seed(workspace, loaded.workspace_files)
    runtime = build_runtime(
        RunOptions(
            scenario=loaded, workspace=workspace, pace=math.inf, approve="all", session=session
        )
    )
    await runtime.agent.prompt(runtime.prompt)
    assert runtime.recorder is not None
    runtime.recorder.close()


def templates(scratch: Path) -> list[bytes]:
    out = []
    for n, (turns, width) in enumerate(TEMPLATES):
        session = scratch / f"template{n}.jsonl"
        asyncio.run(_record(scratch / f"ws{n}", session, _scenario(turns, width)))
        out.append(session.read_bytes())
    return out


def make(directory: Path, count: int, legacy: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="cold-index-templates-") as scratch:
        blobs = templates(Path(scratch))
        if legacy:
            blobs = [_without_summary(blob) for blob in blobs]
        store = Path(scratch) / "blobs"
        if store.is_dir():  # the checkpoints' store, so restore works on the copies
            shutil.copytree(store, directory / "blobs", dirs_exist_ok=True)
        for n in range(count):
            path = directory / f"s{n:05}.jsonl"
            if not path.exists():
                copy = blobs[n % len(blobs)].replace(MARK.encode(), b"mk%06d" % n)
                path.write_bytes(copy if legacy else _with_crc(copy))


def _with_crc(blob: bytes) -> bytes:
    """The copy's last summary line with the CRC of the copy's bytes (as the recorder
    would have written it, had the run used this marker)."""
    cut = blob.rindex(b"\n", 0, len(blob) - 1) + 1
    prefix, line = blob[:cut], blob[cut:]
    assert MARKER in line, "the template's last line is not a summary line"
    line = re.sub(rb'"crc32":[0-9]+', b'"crc32":%d' % zlib.crc32(prefix), line, count=1)
    return prefix + line


def _without_summary(blob: bytes) -> bytes:
    lines = blob.split(b"\n")
    return b"\n".join(line for line in lines if MARKER not in line)


def cold(directory: Path) -> tuple[float, float, Any]:
    """Wall and CPU seconds of indexing `directory` from nothing, and the report."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{directory / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    start, cpu = time.perf_counter(), time.process_time()
    with Library(directory) as library:
        report = library.refresh()
    return time.perf_counter() - start, time.process_time() - cpu, report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--legacy", action="store_true", help="sessions without a summary line (older workbench)"
    )
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="cold-index-"))
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    make(directory, args.sessions, args.legacy)
    size = sum(p.stat().st_size for p in directory.glob("*.jsonl"))
    print(f"{args.sessions} sessions, {size / 1e6:.1f} MB, in {directory}")
    print(f"write the files:                {time.perf_counter() - start:8.2f} s")
    times, cpus = [], []
    for _ in range(args.repeat):
        seconds, cpu, report = cold(directory)
        times.append(seconds)
        cpus.append(cpu)
    print(
        f"cold index (median of {args.repeat}):    {statistics.median(times):8.2f} s"
        f"  (runs: {', '.join(f'{t:.2f}' for t in times)}; {report})"
    )
    print(f"  of which CPU (median):        {statistics.median(cpus):8.2f} s")
    commands = []
    for _ in range(args.repeat):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{directory / INDEX_NAME}{suffix}").unlink(missing_ok=True)
        command = [sys.executable, "-m", "workbench", "sessions", "--json", "--dir", str(directory)]
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "--search", f"mk{args.sessions - 1:06}"], capture_output=True, check=True
        )
        commands.append(time.perf_counter() - start)
        assert f"s{args.sessions - 1:05}.jsonl".encode() in done.stdout
    print(
        f"`workbench sessions --search`, cold (median of {args.repeat}): "
        f"{statistics.median(commands):.2f} s"
    )
    with Library(directory) as library:
        start = time.perf_counter()
        library.refresh()
        print(f"refresh, nothing changed:       {(time.perf_counter() - start) * 1000:8.1f} ms")
        last = args.sessions - 1
        for label, words in (
            ("one session's marker", f"mk{last:06}"),
            ("a written file's path", f"step{last % 3}.txt mk{last:06}"),
            ("a tool name and a word", "write_file configuration"),
        ):
            start = time.perf_counter()
            found = library.entries(None, words)
            took = (time.perf_counter() - start) * 1000
            print(f"search {label:<24} {took:8.1f} ms  ({len(found)} found)")


if __name__ == "__main__":
    main()
