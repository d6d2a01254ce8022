"""Confinement of file tools to one workspace root, and the one canonical form of a path.

Every built-in file tool turns the model's path into the file it opens through
`Workspace.resolve`, and the permission gate judges rules against
`Workspace.canonical`, which is that same path relative to the root. Rules and
tools therefore always talk about the same file: what a rule allowed (or denied)
is exactly what gets opened.

`resolve` refuses, with a message saying why, rather than "fixing" a path:

- text that cannot be a plain path: a NUL byte, control or invisible formatting
  characters (newlines, bidi controls, zero-width characters), lone surrogates,
  whitespace at the start or end of the path or of any of its segments, and
  backslashes (on POSIX a backslash is part of a name, so `a\\b/..` would mean
  something other than it seems);
- `~` (a home directory), `..` that climbs out, absolute paths elsewhere, and
  symlinks whose target lies outside the root.

The check is made on the real path (symlinks followed), and the tools then open
that real path by walking it from a handle on the root without following any link
(`workbench.tools.opening`), so neither a link inside the workspace nor a directory swapped
for a link after the check can smuggle a read or write past it. A file whose other
hard links are hidden by the rules, or lie outside, reads as missing. Messages name
paths only relative to the root, never the root's absolute path or where an outside
symlink points; a hidden file and a missing one get the same message (`not_found`).

(`run_command` is not confined: the permission gate guards it.)
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Callable
from pathlib import Path

from workbench.tools.opening import PathChanged, hidden_links, open_under

BINARY_SNIFF_BYTES = 8192
"""How much of a file is inspected to decide whether it is binary."""

IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".idea",
    }
)
"""Directories that listing and searching skip unless asked for by name."""

_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories a path may not hold: controls, invisible formatting, surrogates,
line and paragraph separators."""


class WorkspaceError(PermissionError):
    """A path was refused because it leads outside the workspace."""


class NotFound(FileNotFoundError):
    """A file the tools may not use because it is missing or hidden (one message for both)."""

    def __init__(self, shown: str) -> None:
        super().__init__(f"File not found: {shown}")
        self.shown = shown
        """The path, relative to the root."""


class Workspace:
    """A root directory that file tools may not leave.

    Args:
        root: the workspace directory; it is resolved (symlinks followed) once.
    """

    def __init__(self, root: Path | str, may_read: Callable[[str], bool] | None = None) -> None:
        self.root = Path(os.path.realpath(Path(root).expanduser()))
        if not self.root.is_dir():
            raise NotADirectoryError(f"Workspace root {self.root} is not a directory")
        self.may_read: Callable[[str], bool] = may_read or _anything
        """Whether `read_file` may read a workspace-relative path without asking
        (the permission gate's `may_read`); the reading tools show only such files."""

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def contains(self, path: Path) -> bool:
        """Whether `path` (already absolute and normalised) is the root or under it."""
        return path == self.root or path.is_relative_to(self.root)

    def resolve(self, path: str) -> Path:
        """The real, absolute path for a tool's `path` argument, or `WorkspaceError`.

        Relative paths are taken from the root ("" is the root). The result has
        every symlink resolved, so callers open exactly the file that was checked.
        """
        check_path_text(path)
        if path.startswith("~"):
            raise WorkspaceError(
                f"Path {path!r} refers to a home directory; paths must be inside the workspace"
            )
        candidate = Path(path or ".")
        absolute = candidate.is_absolute()
        lexical = Path(os.path.normpath(candidate if absolute else self.root / candidate))
        if not self.contains(lexical):
            how = "is an absolute path" if absolute else "uses '..' to climb"
            raise WorkspaceError(
                f"Path {path!r} {how} outside the workspace; "
                "only files inside the workspace can be used"
            )
        try:
            real = Path(os.path.realpath(lexical))
        except OSError:  # a link swapped for a directory while it was being read
            raise WorkspaceError(
                f"Path {path!r} changed while it was being resolved; nothing was read or written"
            ) from None
        if not self.contains(real):
            raise WorkspaceError(
                f"Path {path!r} goes through a symlink that leads outside the workspace; "
                "only files inside the workspace can be used"
            )
        return real

    def canonical(self, path: str) -> str:
        """The file `resolve` opens, relative to the root: what permission rules judge."""
        return self.display(self.resolve(path))

    def display(self, path: Path) -> str:
        """`path` relative to the root, with forward slashes ("." for the root)."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        return rel.as_posix()  # the root itself is "."

    def open(self, raw: str, flags: int, *, make_parents: bool = False) -> tuple[int, str]:
        """(file descriptor, how to show it) for the model's path `raw`, opened exactly
        where `canonical` judged it (`workbench.tools.opening.open_under`); the caller closes it.

        Raises:
            WorkspaceError: a path outside, or one that changed while being opened.
            FileNotFoundError: `not_found`.
            OSError: what `open` raises otherwise, naming the relative path.
        """
        shown = self.canonical(raw)
        try:
            return open_under(self.root, shown, flags, make_parents=make_parents), shown
        except PathChanged as exc:
            raise WorkspaceError(str(exc)) from None
        except FileNotFoundError:
            raise self.not_found(shown) from None

    def not_found(self, shown: str) -> NotFound:
        """The one message for a file that is missing, hidden by the rules, or reachable
        only through a hidden hard link: the model cannot tell them apart."""
        return NotFound(shown)

    def hidden_inode(self, info: os.stat_result) -> bool:
        """Whether an opened file is also a file the rules hide (another hard link of it
        is hidden, or lies outside the workspace)."""
        return hidden_links(self.root, info, self.may_read)

    def text_file(
        self, raw: str, *, refusal: str, on_directory: str, writable: bool = False
    ) -> tuple[int, str]:
        """An existing regular text file inside the workspace, open: (its descriptor,
        how to show it); the caller closes it.

        Args:
            raw: the path the model gave.
            refusal: finishes "X is a binary file (N bytes); ..."
                (e.g. "read_file only reads text").
            on_directory: finishes "X is a directory..." (e.g. ", not a file").
            writable: open it for reading and writing.
        """
        flags = (os.O_RDWR if writable else os.O_RDONLY) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd, shown = self.open(raw, flags)
        except IsADirectoryError as exc:
            raise IsADirectoryError(f"{exc.filename} is a directory{on_directory}") from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(f"{shown} is a directory{on_directory}")
            if not stat.S_ISREG(info.st_mode):
                raise ValueError(f"{shown} is not a regular file (a device, socket or pipe)")
            if self.hidden_inode(info):
                raise self.not_found(shown)
            if is_binary(os.pread(fd, BINARY_SNIFF_BYTES, 0)):
                raise ValueError(f"{shown} is a binary file ({info.st_size} bytes); {refusal}")
        except BaseException:
            os.close(fd)
            raise
        return fd, shown

    def shown(self, path: Path) -> bool:
        """Whether a search or a listing may show this file (its real path is readable)."""
        return self.may_read(self.display(Path(os.path.realpath(path))))

    def real_inside(self, path: Path) -> bool:
        """Whether `path`, with its symlinks followed, stays inside the workspace."""
        return self.contains(Path(os.path.realpath(path)))


def _anything(path: str) -> bool:
    return True


def check_path_text(path: str) -> None:
    """Refuse (`WorkspaceError`) text that cannot be a plain path; see the module docstring."""
    if "\x00" in path:
        raise WorkspaceError("Path contains a NUL byte")
    bad = next((ch for ch in path if unicodedata.category(ch) in _UNPRINTABLE), None)
    if bad is not None:
        raise WorkspaceError(
            f"Path {path!r} contains the character U+{ord(bad):04X}; paths may not hold "
            "control, invisible or surrogate characters"
        )
    if "\\" in path and os.sep == "/":
        raise WorkspaceError(f"Path {path!r} contains a backslash; separate directories with '/'")
    if any(part != part.strip() for part in path.split("/")):
        raise WorkspaceError(
            f"Path {path!r} has whitespace at the start or end of a name; give the path without it"
        )


def is_binary(sample: bytes) -> bool:
    """A NUL byte, or bytes that are not UTF-8, mark a file as binary."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut off at the end of the sample is not binary.
        return exc.reason != "unexpected end of data"
    return False


def read_sample(path: Path, size: int = BINARY_SNIFF_BYTES) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)
