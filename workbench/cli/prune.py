"""`workbench sessions prune`: delete old sessions by age, count or total size.

What goes is decided by `workbench.sessions.prune.plan` (a fork's parent is kept unless
`--include-parents`); this module parses the flags, refreshes the index and deletes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from workbench.cli.args import Parser
from workbench.cli.commands import EXIT_USAGE
from workbench.cli.sessions import age
from workbench.sanitize import literal
from workbench.sessions.library import Library
from workbench.sessions.prune import Plan, plan

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}


def size(text: str) -> int:
    """ "2GB", "500MB", "10k", "1GiB" or a number of bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (2GB, 500MB, 10k, 1GiB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def prune_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench sessions prune",
        description="Delete recorded sessions: those older than an age, all but the newest "
        "N, or the oldest until the rest fit in a size (any of them together: a session "
        "goes if one says so). A session that a fork names as its parent is kept, and "
        "the reason said, unless --include-parents.",
    )
    parser.add_argument("--older-than", type=age, metavar="AGE", help="e.g. 30d, 12h, 2w")
    parser.add_argument("--keep", type=int, metavar="N", help="keep the newest N")
    parser.add_argument(
        "--max-size",
        type=size,
        metavar="SIZE",
        help="delete the oldest until the rest take at most SIZE (e.g. 2GB)",
    )
    parser.add_argument("--dry-run", action="store_true", help="say what would go; delete nothing")
    parser.add_argument(
        "--include-parents",
        action="store_true",
        help="delete sessions that forks name as their parent too",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        metavar="DIR",
        help="the sessions directory (default: where runs are recorded)",
    )
    return parser


def prune_main(argv: list[str]) -> int:
    parser = prune_parser()
    args = parser.parse_args(argv)
    if args.older_than is None and args.keep is None and args.max_size is None:
        parser.error("say what to delete: --older-than AGE, --keep N or --max-size SIZE")
    if args.keep is not None and args.keep < 0:
        parser.error("--keep needs a number of sessions, 0 or more")
    try:
        with Library(args.dir) as library:
            library.refresh()
            entries = library.entries()
            stats = library.files()
            chosen = plan(
                entries,
                stats,
                now_ms=time.time() * 1000.0,
                older_than=args.older_than,
                keep=args.keep,
                max_size=args.max_size,
                include_parents=args.include_parents,
            )
            freed = _delete(chosen, stats, dry_run=args.dry_run)
            if not args.dry_run:
                library.refresh()
    except OSError as exc:
        print(f"workbench sessions prune: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    for entry, fork in chosen.kept:
        print(
            f"kept {literal(entry.path.name)}: the fork {literal(fork)} names it as its "
            "parent (--include-parents deletes it anyway)"
        )
    verb = "would delete" if args.dry_run else "deleted"
    count = len(chosen.delete) if args.dry_run else freed[0]
    print(
        f"{verb} {count} session{'s' if count != 1 else ''} ({freed[1] / 1e6:.1f} MB)"
        f"{'; kept ' + str(len(chosen.kept)) + ' parent(s)' if chosen.kept else ''}"
    )
    return 0


def _delete(chosen: Plan, stats: dict[str, tuple[int, int]], *, dry_run: bool) -> tuple[int, int]:
    """Delete (or only name) each chosen session: (deleted, bytes)."""
    deleted = freed = 0
    for entry in chosen.delete:
        name = literal(entry.path.name)
        if dry_run:
            print(f"would delete {name}")
            freed += stats.get(entry.path.name, (0, 0))[0]
            continue
        try:
            entry.path.unlink()
        except FileNotFoundError:
            continue  # another prune took it
        except OSError as exc:
            print(f"could not delete {name}: {literal(exc.strerror or str(exc))}")
            continue
        print(f"deleted {name}")
        deleted += 1
        freed += stats.get(entry.path.name, (0, 0))[0]
    return deleted, freed
