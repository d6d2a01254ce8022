"""Walk a workspace within bounds, and put the files that changed into the blob store.

What a checkpoint leaves out, and says so (each a `LeftOut` with its reason):

- git's and the workbench's own directories (`.git/`, `.workbench/`: a recorded
  rules file must never come back as the rules of a fork), dependency and cache
  directories (`node_modules/`, `.venv/`, ...: the ones listing skips), and the
  session files themselves when they lie inside the workspace;
- symlinks (not followed: one may lead anywhere) and anything not a regular file;
- a file larger than `max_file_bytes`, and files past `max_total_bytes` in one scan;
- files past the first `max_files` (a note says the walk stopped there).

A scan compares each file's size and modification time with what was recorded
last, and reads only the files that differ, so its cost is one `stat` per file
plus the bytes that changed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from workbench.permissions.protected import PROTECTED_DIRS
from workbench.sessions.blobs import BlobStore
from workbench.sessions.workspace_records import FileEntry, LeftOut
from workbench.tools.workspace import IGNORED_DIRS

MB = 1024 * 1024


class CheckpointCaps(BaseModel):
    """The bounds of a checkpoint (the project file's `[checkpoints]` table)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    max_file_bytes: int = Field(default=8 * MB, ge=0)
    """A larger file is left out (and named)."""
    max_total_bytes: int = Field(default=256 * MB, ge=0)
    """At most this many bytes are read by one scan; the files past it are left out."""
    max_files: int = Field(default=20_000, ge=1)
    """The walk stops after this many files."""


_IGNORED = IGNORED_DIRS - set(PROTECTED_DIRS)
_WHY_PROTECTED = "the workbench's rules and git's internals are never recorded or restored"
_WHY_IGNORED = "a dependency or cache directory (not recorded)"
WHY_LINK = "a symlink (links are not followed)"


@dataclass(frozen=True)
class Stat:
    mtime_ns: int
    size: int
    mode: int


@dataclass
class Walk:
    """What one walk found."""

    files: dict[str, Stat] = field(default_factory=dict)
    left_out: list[LeftOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    empty_dirs: list[str] = field(default_factory=list)
    """Directories with nothing in them (a restore makes them again)."""


def walk(root: Path, caps: CheckpointCaps, skip: Iterable[Path] = ()) -> Walk:
    """The regular files under `root` (relative posix path -> stat), within `caps`.

    `skip`: directories left out as the session files (e.g. the sessions directory)."""
    found = Walk()
    skipped = {os.path.realpath(p) for p in skip}
    stack = [("", str(root))]
    while stack:
        prefix, directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            found.left_out.append(LeftOut(path=prefix or ".", reason=f"unreadable: {exc.strerror}"))
            continue
        if not entries and prefix:
            found.empty_dirs.append(prefix.rstrip("/"))
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                found.left_out.append(LeftOut(path=rel, reason=f"unreadable: {exc.strerror}"))
                continue
            if stat.S_ISLNK(info.st_mode):
                found.left_out.append(LeftOut(path=rel, reason=WHY_LINK))
            elif stat.S_ISDIR(info.st_mode):
                why = _why_skipped(rel, entry.path, skipped)
                if why:
                    found.left_out.append(LeftOut(path=rel + "/", reason=why))
                else:
                    subdirs.append((rel + "/", entry.path))
            elif (
                entry.name.casefold() in PROTECTED_DIRS
            ):  # a worktree's `.git` file names a git dir
                found.left_out.append(LeftOut(path=rel, reason=_WHY_PROTECTED))
            elif not stat.S_ISREG(info.st_mode):
                found.left_out.append(LeftOut(path=rel, reason="not a regular file"))
            elif len(found.files) >= caps.max_files:
                found.notes.append(
                    f"the walk stopped after {caps.max_files} files (max_files); "
                    "files after that are not recorded"
                )
                return found
            else:
                found.files[rel] = Stat(info.st_mtime_ns, info.st_size, info.st_mode & 0o777)
        stack.extend(reversed(subdirs))
    return found


def _why_skipped(rel: str, path: str, skipped: set[str]) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    if name.casefold() in PROTECTED_DIRS:  # a `.git` anywhere (a vendored repository's too)
        return _WHY_PROTECTED
    if name in _IGNORED:
        return _WHY_IGNORED
    if skipped and os.path.realpath(path) in skipped:
        return "the session files"
    return None


@dataclass
class Capture:
    """Files put into the store by one scan, and the ones left out."""

    files: list[FileEntry] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bytes_read: int = 0


def capture(
    root: Path,
    stats: dict[str, Stat],
    paths: Iterable[str],
    store: BlobStore,
    caps: CheckpointCaps,
) -> Capture:
    """Store the content of each of `paths` (with its stat in `stats`), within the caps."""
    done = Capture()
    over_total = 0
    for rel in paths:
        info = stats[rel]
        if info.size > caps.max_file_bytes:
            done.left_out.append(
                LeftOut(
                    path=rel,
                    reason=(
                        f"larger than the per-file cap ({info.size} > {caps.max_file_bytes} bytes)"
                    ),
                )
            )
            continue
        if done.bytes_read + info.size > caps.max_total_bytes:
            done.left_out.append(LeftOut(path=rel, reason="past the total size cap"))
            over_total += 1
            continue
        try:
            data = read_regular(root / rel)
        except OSError as exc:
            done.left_out.append(LeftOut(path=rel, reason=f"unreadable: {exc.strerror or exc}"))
            continue
        done.bytes_read += len(data)
        done.files.append(FileEntry(path=rel, blob=store.put(data), mode=info.mode, size=len(data)))
    if over_total:
        done.notes.append(
            f"{over_total} files were left out: they came after {caps.max_total_bytes} bytes "
            "(max_total_bytes)"
        )
    return done


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file, never through a symlink."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def stat_of(path: Path) -> Stat | None:
    """The stat of a regular file (None: missing, a link, or not a file)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return Stat(info.st_mtime_ns, info.st_size, info.st_mode & 0o777)
