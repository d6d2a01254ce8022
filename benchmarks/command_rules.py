"""Command rules: how long a glob takes on a huge command, and which attacks it allows.

Each case runs in a fresh Python process against the code on PYTHONPATH, so the
same script measures an older tree too (a case past --limit seconds is reported
as such):

    python benchmarks/command_rules.py                  # this tree
    python benchmarks/command_rules.py --tree /tmp/old  # a `git archive` of another commit

Cases:
- `two_stars_48k`: `run_command(command="git * * x")` against a 48 KB command
  (the issue's 42 s case);
- `literal_8k`: `git log *` against the largest literal command a glob may match
  (8 KiB), median of 20 fresh commands;
- `text_four_stars_48k`: `t(q="*a*a*a*b")` against 48 KB of `a`;
- `attacks`: how many of the spellings below `git log *` allows (each runs a
  program other than git log, or reads more than its text).
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
from typing import Any

ATTACKS = [
    r"git log ${X:=\$\(touch\ F\)} ${X@P}",
    r"git log ${Y:=a[\$\(touch\ F\)]} ${HOME:Y}",
    "git log $HOME",
    'git log "${X:-$(id)}"',
    "git log $((1+2))",
    "git log $(id)",
    "git log `id`",
    "git log <(id)",
    "git log ~root",
    "git log a{b,c}",
    "git log *.py",
    "git log $'\\x41'",
    "git log > out",
    "git log <<< x",
    "git log; id",
    "git log && id",
    "git log | sh",
    "git log\nid",
    "X=1 git log x",
    "git log x # c",
    "git log .git/config",
    "git log --git-dir=.git",
]


def _pattern(text: str) -> Any:
    from workbench.permissions import CallPattern

    return CallPattern.parse(text)


def two_stars_48k() -> dict[str, Any]:
    command = "git log " + "a " * 24_000
    pattern = _pattern('run_command(command="git * * x")')
    start = time.perf_counter()
    matched = pattern.matches("run_command", {"command": command})
    return {"seconds": round(time.perf_counter() - start, 4), "matched": matched}


def literal_8k() -> dict[str, Any]:
    pattern = _pattern('run_command(command="git log *")')
    times = []
    for i in range(20):
        command = "git log " + " ".join(f"w{i}x{j:05d}" for j in range(1000))[: 8192 - 8]
        start = time.perf_counter()
        matched = pattern.matches("run_command", {"command": command.rstrip()})
        times.append(time.perf_counter() - start)
    return {"median_seconds": round(statistics.median(times), 5), "matched": matched}


def text_four_stars_48k() -> dict[str, Any]:
    pattern = _pattern('t(q="*a*a*a*b")')
    start = time.perf_counter()
    matched = pattern.matches("t", {"q": "a" * 48_000})
    return {"seconds": round(time.perf_counter() - start, 4), "matched": matched}


def attacks() -> dict[str, Any]:
    pattern = _pattern('run_command(command="git log *")')
    allowed = [a for a in ATTACKS if pattern.matches("run_command", {"command": a})]
    return {"tried": len(ATTACKS), "allowed": len(allowed), "which": allowed}


CASES = {f.__name__: f for f in (two_stars_48k, literal_8k, text_four_stars_48k, attacks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="measure this source tree instead")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(CASES[args.case]()))
        return
    tree = (args.tree or Path(__file__).resolve().parent.parent).resolve()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for name in CASES:
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--case", name],
                env=env,
                capture_output=True,
                text=True,
                timeout=args.limit,
                check=True,
            )
            print(f"{name}: {out.stdout.strip()}")
        except subprocess.TimeoutExpired:
            print(f"{name}: over {args.limit:.0f} s")


if __name__ == "__main__":
    main()
