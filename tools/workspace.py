"""Confinement of file tools to one workspace root.

Every built-in file tool resolves the model's path through `Workspace.resolve`
before touching the disk, so nothing outside the root is ever read or written:
`..` that climbs out, absolute paths elsewhere, `~` and symlinks whose target lies
outside are refused with an error that says which rule was broken. The check is
made on the real path (symlinks followed), and the tools then open that real
path, so a link inside the workspace cannot smuggle a read or write past it.

(A process that swaps a directory for a symlink between the check and the open
could still race it; the workspace is the user's own directory, so that threat is
out of scope. `run_command` is not confined: the permission gate guards it.)
"""

from __future__ import annotations

import os
from pathlib import Path

BINARY_SNIFF_BYTES = 8192
"""How much of a file is inspected to decide whether it is binary."""

IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".idea"}
)
"""Directories that listing and searching skip unless asked for by name."""


class WorkspaceError(PermissionError):
    """A path was refused because it leads outside the workspace."""


class Workspace:
    """A root directory that file tools may not leave.

    Args:
        root: the workspace directory; it is resolved (symlinks followed) once.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(os.path.realpath(Path(root).expanduser()))
        if not self.root.is_dir():
            raise NotADirectoryError(f"Workspace root {self.root} is not a directory")

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def contains(self, path: Path) -> bool:
        """Whether `path` (already absolute and normalised) is the root or under it."""
        return path == self.root or path.is_relative_to(self.root)

    def resolve(self, path: str) -> Path:
        """The real, absolute path for a tool's `path` argument, or `WorkspaceError`.

        Relative paths are taken from the root. The result has every symlink
        resolved, so callers open exactly the file that was checked.
        """
        if "\x00" in path:
            raise WorkspaceError("Path contains a NUL byte")
        text = path.strip() or "."
        if text.startswith("~"):
            raise WorkspaceError(
                f"Path {path!r} refers to a home directory; paths must be inside the "
                f"workspace ({self.root})"
            )
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        lexical = Path(os.path.normpath(candidate))
        if not self.contains(lexical):
            how = "is an absolute path" if Path(text).is_absolute() else "uses '..' to climb"
            raise WorkspaceError(
                f"Path {path!r} {how} outside the workspace ({self.root}); "
                "only files inside the workspace can be used"
            )
        real = Path(os.path.realpath(lexical))
        if not self.contains(real):
            raise WorkspaceError(
                f"Path {path!r} goes through a symlink that leads outside the workspace "
                f"(to {real}); only files inside the workspace can be used"
            )
        return real

    def display(self, path: Path) -> str:
        """`path` relative to the root, with forward slashes ("." for the root)."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."

    def text_file(self, raw: str, *, refusal: str, on_directory: str) -> tuple[Path, str]:
        """An existing regular text file inside the workspace: (its path, how to show it).

        Args:
            raw: the path the model gave.
            refusal: finishes "X is a binary file (N bytes); ..." (e.g. "read_file only reads text").
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

    def real_inside(self, path: Path) -> bool:
        """Whether `path`, with its symlinks followed, stays inside the workspace."""
        return self.contains(Path(os.path.realpath(path)))


def is_binary(sample: bytes) -> bool:
    """A NUL byte, or bytes that are not UTF-8, mark a file as binary."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut off at the end of the sample is not binary.
        return exc.start < len(sample) - 3
    return False


def read_sample(path: Path, size: int = BINARY_SNIFF_BYTES) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)
