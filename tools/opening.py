"""Opening a file exactly where it was judged: a walk from the workspace's directory handle.

The gate judges the real path of a tool's argument (`Workspace.canonical`: every
symlink resolved). Between that judgement and the open, a process the model started
could swap a directory on the path for a symlink to somewhere else; opening by path
would follow it. So the file tools open by walking the judged relative path one
name at a time from a handle on the workspace root, each directory with
`O_DIRECTORY | O_NOFOLLOW` and the file itself with `O_NOFOLLOW`: a symlink met on
the way fails the open (`PathChanged`) instead of being followed.

A second way to reach a file the rules hide is a hard link made by an allowed
command (`ln .env notes.txt`): the same inode under a name the rules allow.
`hidden_links` finds the other names of a file with more than one link and says
whether any of them is hidden, or lies outside the workspace.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
"""How every directory on a walked path is opened."""

MAX_LINK_SEARCH = 200_000
"""Most names looked at while finding a file's other hard links (more: treated as hidden)."""


class PathChanged(PermissionError):
    """A directory on the judged path became a symlink before the file was opened."""


def _step(fd: int, name: str, rel: str, full: str, make: bool) -> int:
    """The directory `name` under `fd` (`rel` from the root; made when missing and
    `make`), never through a link. Without `make`, a missing directory or a file in the
    way means `full`, the path being opened, is not found."""
    try:
        return os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not make:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), full) from None
        try:
            os.mkdir(name, 0o777, dir_fd=fd)
        except FileExistsError:
            pass
        return _step(fd, name, rel, full, make=False)
    except OSError as exc:
        if exc.errno == errno.ENOTDIR and not make and not _is_link(fd, name):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), full) from None
        _raise_changed(fd, name, rel, exc)
        raise


def _is_link(fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:
        return False


def _raise_changed(fd: int, name: str, rel: str, exc: OSError) -> None:
    """Raise `PathChanged` if `name` under `fd` is a symlink now, or a directory that an
    open had just found not to be one (a link swapped back); else an OSError naming
    `rel` only (never the workspace's absolute path)."""
    try:
        mode = os.lstat(name, dir_fd=fd).st_mode
    except OSError:
        mode = 0
    not_a_dir = exc.errno in (errno.ENOTDIR, errno.ELOOP)
    if stat.S_ISLNK(mode) or (not_a_dir and stat.S_ISDIR(mode)):
        raise PathChanged(
            f"{rel} changed while it was being opened (a part of it is now a symlink); "
            "nothing was read or written"
        ) from None
    raise OSError(exc.errno, exc.strerror, rel) from None


def open_under(
    root: Path, rel: str, flags: int, mode: int = 0o644, *, make_parents: bool = False
) -> int:
    """A file descriptor for `rel` (a relative path with no `.`, `..` or symlinks, as
    `Workspace.display` gives it) opened under `root` without following any link.

    Raises:
        PathChanged: a part of the path is a symlink.
        OSError: what `open` raises (naming `rel`), e.g. FileNotFoundError.
    """
    parts = [] if rel in ("", ".") else rel.split("/")
    fd = os.open(root, DIRECTORY_FLAGS)
    try:
        for i, name in enumerate(parts[:-1]):
            nxt = _step(fd, name, "/".join(parts[: i + 1]), rel, make_parents)
            os.close(fd)
            fd = nxt
        if not parts:  # the root itself: a directory, never written as a file
            if flags & (os.O_WRONLY | os.O_RDWR):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), ".")
            return os.dup(fd)
        try:
            return os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=fd)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError | FileExistsError | IsADirectoryError):
                raise type(exc)(exc.errno, exc.strerror, rel) from None
            _raise_changed(fd, parts[-1], rel, exc)
            raise
    finally:
        os.close(fd)


def hidden_links(
    root: Path, info: os.stat_result, may_read: Callable[[str], bool], limit: int = MAX_LINK_SEARCH
) -> bool:
    """Whether a file with these stats has a name the rules hide, or a name outside the
    workspace (its link count is more than the names found inside)."""
    if info.st_nlink <= 1:
        return False
    key = (info.st_dev, info.st_ino)
    names: list[str] = []
    seen = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            seen += 1
            if seen > limit:
                return True
            path = os.path.join(dirpath, name)
            try:
                other = os.lstat(path)
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == key:
                names.append(Path(path).relative_to(root).as_posix())
    return len(names) < info.st_nlink or not all(may_read(n) for n in names)
