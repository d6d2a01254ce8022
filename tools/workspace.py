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
that real path, so a link inside the workspace cannot smuggle a read or write
past it. Messages name paths only as the model gave them or relative to the
root, never where an outside symlink points.

(A process that swaps a directory for a symlink between the check and the open
could still race it; `run_command` is not confined: the permission gate guards it.)
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from pathlib import Path

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
        real = Path(os.path.realpath(lexical))
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

    def text_file(self, raw: str, *, refusal: str, on_directory: str) -> tuple[Path, str]:
        """An existing regular text file inside the workspace: (its path, how to show it).

        Args:
            raw: the path the model gave.
            refusal: finishes "X is a binary file (N bytes); ..."
                (e.g. "read_file only reads text").
            on_directory: finishes "X is a directory..." (e.g. ", not a file").
        """
        path = self.resolve(raw)
        shown = self.display(path)
        if not path.exists():
            raise FileNotFoundError(f"File not found: {raw}")
        if path.is_dir():
            raise IsADirectoryError(f"{shown} is a directory{on_directory}")
        if not path.is_file():
            raise ValueError(f"{shown} is not a regular file (a device, socket or pipe)")
        if is_binary(read_sample(path)):
            raise ValueError(f"{shown} is a binary file ({path.stat().st_size} bytes); {refusal}")
        return path, shown

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
