"""Which old sessions to delete, by age, count or total size (`workbench sessions prune`).

A session a fork names as its parent is kept (and the reason said) unless
`--include-parents`: replay of the fork opens its parent's file, and the fork's header
points at it. A parent is only protected by a fork that stays; when the fork goes too,
so may the parent. `age` and `size` read the texts the command's flags and a project's
`[sessions] prune` policy take ("30d", "2GB").
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

from workbench.sessions.library import Entry

_AGES = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def age(text: str) -> float:
    """ "30d", "12h", "2w", "90m" in seconds."""
    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age (30d, 12h, 2w, 90m)")
    return int(match.group(1)) * _AGES[match.group(2)]


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
