"""`workbench sessions prune`: delete old sessions by age, count or total size.

What goes is decided by `workbench.sessions.prune.plan` (a fork's parent is kept unless
`--include-parents`); this module parses the flags, refreshes the index and deletes.
A project may ask for the same at the start of every recorded run (`apply_policy`):
`[sessions] prune = { older_than = "30d", keep = 500, max_size = "2GB" }` in its
`workbench.toml`.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.cli.args import Parser
from workbench.cli.commands import EXIT_USAGE
from workbench.sanitize import literal
from workbench.sessions.library import Library
from workbench.sessions.prune import Plan, age, plan, size


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
        chosen, freed = prune(
            args.dir,
            older_than=args.older_than,
            keep=args.keep,
            max_size=args.max_size,
            include_parents=args.include_parents,
            dry_run=args.dry_run,
            say=print,
        )
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


def prune(
    directory: Path | None,
    *,
    older_than: float | None = None,
    keep: int | None = None,
    max_size: int | None = None,
    include_parents: bool = False,
    dry_run: bool = False,
    say: Callable[[str], object] = lambda _line: None,
) -> tuple[Plan, tuple[int, int]]:
    """Plan and delete (`say` gets a line for each file): (the plan, (deleted, bytes)).

    Raises:
        OSError: the directory or its index cannot be read.
    """
    with Library(directory) as library:
        library.refresh()
        stats = library.files()
        chosen = plan(
            library.entries(),
            stats,
            now_ms=time.time() * 1000.0,
            older_than=older_than,
            keep=keep,
            max_size=max_size,
            include_parents=include_parents,
        )
        freed = _delete(chosen, stats, dry_run=dry_run, say=say)
        if not dry_run:
            library.refresh()
    return chosen, freed


def apply_policy(policy: Any, directory: Path | None = None) -> str | None:
    """The project's `[sessions] prune` policy (a `PrunePolicy`), applied: one line
    saying what went and which parents stayed (None when nothing did)."""
    try:
        chosen, (deleted, freed) = prune(
            directory,
            older_than=policy.older_than_seconds,
            keep=policy.keep,
            max_size=policy.max_size_bytes,
        )
    except (OSError, sqlite3.Error) as exc:
        return f"the [sessions] prune policy was not applied: {literal(str(exc))}"
    if not deleted and not chosen.kept:
        return None
    parents = ", ".join(literal(entry.path.name) for entry, _fork in chosen.kept[:3])
    more = "…" if len(chosen.kept) > 3 else ""
    kept = (
        f"; kept {len(chosen.kept)} that a fork names as its parent ({parents}{more})"
        if chosen.kept
        else ""
    )
    return (
        f"deleted {deleted} old session{'s' if deleted != 1 else ''} "
        f"({freed / 1e6:.1f} MB) as the [sessions] prune policy says{kept}"
    )


def _delete(
    chosen: Plan, stats: dict[str, tuple[int, int]], *, dry_run: bool, say: Callable[[str], object]
) -> tuple[int, int]:
    """Delete (or only name) each chosen session: (deleted, bytes)."""
    deleted = freed = 0
    for entry in chosen.delete:
        name = literal(entry.path.name)
        if dry_run:
            say(f"would delete {name}")
            freed += stats.get(entry.path.name, (0, 0))[0]
            continue
        try:
            entry.path.unlink()
        except FileNotFoundError:
            continue  # another prune took it
        except OSError as exc:
            say(f"could not delete {name}: {literal(exc.strerror or str(exc))}")
            continue
        say(f"deleted {name}")
        deleted += 1
        freed += stats.get(entry.path.name, (0, 0))[0]
    return deleted, freed
