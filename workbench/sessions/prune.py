"""`workbench sessions prune`: delete old sessions by age, count or total size.

A session a fork names as its parent is kept (and the reason said) unless
`--include-parents`: replay of the fork opens its parent's file, and the fork's header
points at it. A parent is only protected by a fork that stays; when the fork goes too,
so may the parent. The index is refreshed before (what is on disk now decides) and
after (the deleted files drop out).

A project may ask for this at the start of every recorded run (`apply_policy`):
`[sessions] prune = { older_than = "30d", keep = 500, max_size = "2GB" }` in its
`workbench.toml`; the parents of forks are kept the same way, and the run says so.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.cli.args import Parser
from workbench.sanitize import literal
from workbench.sessions.library import Entry, Library
from workbench.sessions.library_cli import age

EXIT_USAGE = 2
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


@dataclass
class Plan:
    delete: list[Entry] = field(default_factory=list)
    kept: list[tuple[Entry, str]] = field(default_factory=list)
    """Sessions a rule chose but that stay, with why."""


def plan(
    entries: list[Entry],
    stats: dict[str, tuple[int, int]],
    *,
    now_ms: float,
    older_than: float | None = None,
    keep: int | None = None,
    max_size: int | None = None,
    include_parents: bool = False,
) -> Plan:
    """What to delete of `entries`; `stats`: each file's (size, mtime_ns)."""

    def when(entry: Entry) -> float:  # unreadable files have no header time
        return float(entry["created"] or stats.get(entry.path.name, (0, 0))[1] / 1e6)

    def size(name: str) -> int:
        return stats.get(name, (0, 0))[0]

    newest_first = sorted(entries, key=when, reverse=True)
    chosen: set[str] = set()
    if older_than is not None:
        cutoff = now_ms - older_than * 1000.0
        chosen |= {e.path.name for e in newest_first if when(e) < cutoff}
    if keep is not None:
        chosen |= {e.path.name for e in newest_first[max(keep, 0) :]}
    protected = {} if include_parents else _protected(newest_first, chosen)
    if max_size is not None:  # the oldest go first, until what stays fits
        total = sum(
            size(e.path.name)
            for e in newest_first
            if e.path.name not in chosen or e.path.name in protected
        )
        for entry in reversed(newest_first):
            if total <= max_size:
                break
            name = entry.path.name
            if name in chosen:
                continue
            chosen.add(name)
            total -= size(name)
            if not include_parents:
                now = _protected(newest_first, chosen)
                total += sum(size(p) for p in now.keys() - protected.keys())
                total -= sum(size(p) for p in protected.keys() - now.keys())
                protected = now
    result = Plan()
    for entry in reversed(newest_first):  # oldest first
        name = entry.path.name
        if name in protected:
            result.kept.append((entry, protected[name]))
        elif name in chosen:
            result.delete.append(entry)
    return result


def _protected(entries: list[Entry], chosen: set[str]) -> dict[str, str]:
    """Chosen parent name -> the fork that keeps it: one that stays (a kept parent
    stays, so the parent it names stays too)."""
    parent_of = {e.path.name: Path(e["parent"]).name for e in entries if e["parent"]}
    protected: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for fork, parent in parent_of.items():
            stays = fork not in chosen or fork in protected
            if stays and parent in chosen and parent not in protected:
                protected[parent] = fork
                changed = True
    return protected


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
    """The project's `[sessions] prune` policy, applied: one line saying what went and
    which parents stayed (None when nothing did)."""
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
    chosen: Plan,
    stats: dict[str, tuple[int, int]],
    *,
    dry_run: bool,
    say: Callable[[str], object],
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
