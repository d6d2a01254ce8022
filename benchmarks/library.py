"""The session library on many sessions: build the index, refresh it, search it.

    python benchmarks/library.py [--sessions 10000] [--dir DIR]

Writes N small synthetic sessions (through the recorder: a prompt, one tool call,
its result, a reply; about 3 KB each) into a temporary directory (or DIR, reused if
it already holds them), then prints the time to build the index from nothing, to
refresh it with nothing changed, after one file changed, and to search and filter
(each search the median of several, through `Library.entries` as the CLI calls it).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.sessions.helpers import write_session  # noqa: E402
from workbench.sessions.library import INDEX_NAME, Filters, Library  # noqa: E402

WORDS = (
    "config parser lexer module cache server client schema token render layout "
    "import export session budget window queue thread socket buffer"
).split()
TOOLS = ("read_file", "edit_file", "write_file", "run_command", "search_files")


def make(directory: Path, count: int) -> float:
    rng = random.Random(7)
    start = time.perf_counter()
    for n in range(count):
        path = directory / f"s{n:05}.jsonl"
        if path.exists():
            continue
        words = " ".join(rng.choice(WORDS) for _ in range(6))
        write_session(
            path,
            f"task {n}: {words} marker{n}",
            tool=rng.choice(TOOLS),
            args={"path": f"src/{rng.choice(WORDS)}.py"},
            result=f"{words} " * 4,
            is_error=rng.random() < 0.1,
            denied=rng.random() < 0.05,
            created=1.7e12 + n * 60_000.0,
            model=rng.choice(("gpt-4o", "llama3", "scripted")),
        )
    return time.perf_counter() - start


def timed(action: object, repeat: int = 1) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="library-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"{args.sessions} sessions in {directory}")
    print(f"write the files:              {make(directory, args.sessions):8.2f} s")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{directory / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    size = sum(p.stat().st_size for p in directory.glob("*.jsonl"))
    library = Library(directory)
    seconds, report = timed(library.refresh)
    print(f"build the index:              {seconds:8.2f} s  ({report})")
    seconds, report = timed(library.refresh, 5)
    print(f"refresh, nothing changed:     {seconds * 1000:8.1f} ms")
    changed = directory / "s00042.jsonl"
    changed.unlink()
    write_session(changed, "task 42 changed", created=1.7e12)
    seconds, report = timed(library.refresh)
    print(f"refresh, one file changed:    {seconds * 1000:8.1f} ms")
    index = Path(f"{directory / INDEX_NAME}").stat().st_size
    print(f"files / index size:           {size / 1e6:8.1f} MB / {index / 1e6:.1f} MB")
    last = args.sessions - 1
    for label, search, filters in (
        (f"search one word (marker{last})", f"marker{last}", None),
        ("search two common words, 50", "config parser", Filters(limit=50)),
        ("search + --tool edit_file --errors", "config", Filters(tool="edit_file", errors=True)),
        ("list --model gpt --denied", None, Filters(model="gpt", denied=True)),
        ("list all", None, None),
    ):
        seconds, found = timed(lambda s=search, f=filters: library.entries(f, s), 7)
        print(f"{label:<38} {seconds * 1000:8.1f} ms  ({len(found)} found)")  # type: ignore[arg-type]
    library.close()


if __name__ == "__main__":
    main()
