"""Protected paths: the workbench's own settings, the project's config, and git's internals.

A model that can write `.workbench/rules.toml` can give itself every permission
for the next run; one that can write `workbench.toml` (or `[tool.workbench]` in a
`pyproject.toml`) chooses which Python files the next start imports; one that can
write `.git/hooks/pre-commit` or a nested repository's `.git/config` runs code the
next time the user runs git there. So one set of paths is protected, for every
tool and every writer:

- `.workbench/` and `.git` at any depth (a directory, or the `.git` file of a
  worktree or submodule), compared casefolded (`.GIT` is `.git` on a
  case-insensitive filesystem);
- every `workbench.toml` and `pyproject.toml`;
- the run's own files wherever they lie in the workspace (`files`): the rules
  file, the MCP config files in use, the sessions directory.

A call that may change a protected path (any tool but the read-only built-ins;
for a built-in, its path arguments; for any other tool, every string argument,
since an MCP server's `move_file(source, destination)` names its paths as it
likes) is never allowed by a broad rule: only a rule whose path glob names that
directory or file (`write_file(path=".git/hooks/**")`) allows it outright. Any
other allow becomes a question for a person, and a headless run that cannot ask
refuses it. Deny rules still deny.

Paths are compared after one normalisation (`as_path`): a `file://` URI becomes
its path, leading slashes collapse to one (`//ws/x` is `/ws/x` on POSIX), `.`
and `..` are resolved lexically, and an absolute path inside the workspace
becomes relative to it. The gate also checks the path with its symlinks followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from workbench.permissions.patterns import CallPattern, style_of

PROTECTED_DIRS = (".workbench", ".git")
"""Directories (or, for `.git`, files) model tools may not change without a rule
naming them, at any depth of the workspace."""

PROTECTED_NAMES = ("workbench.toml", "pyproject.toml")
"""File names that hold the project's workbench configuration, at any depth."""

READING_TOOLS = ("read_file", "list_directory", "search_files")
"""The built-ins that never change a file (the only tools exempt from protection)."""

_HOLDS = {
    ".workbench": "the workbench's own rules and settings",
    ".git": "git's internals (hooks there run on your next commit)",
    "workbench.toml": "the project's workbench configuration (tools it imports, rules, servers)",
    "pyproject.toml": "the project's configuration ([tool.workbench] among it)",
}

_MAX_PATH_TEXT = 4096
"""Longer strings are never paths (PATH_MAX); not worth normalising."""


def as_path(value: str, root: Path | None = None) -> str:
    """`value` in the one form protection compares: a `file://` URI's path, leading
    slashes collapsed to one, `.` and `..` resolved lexically, and, when `root` is
    given, an absolute path inside it made relative ("." for the root itself)."""
    text = value
    if text[:5].casefold() == "file:":
        parts = urlsplit(text)
        text = unquote(parts.path) or "/"
    text = re.sub(r"^/+", "/", text)
    normal = posixpath.normpath(text) if text else "."
    if root is not None and normal.startswith("/"):
        base = root.as_posix()
        if normal == base:
            return "."
        prefix = base if base.endswith("/") else base + "/"
        if normal.startswith(prefix):
            return normal[len(prefix) :]
    return normal


def protected_root(path: str, files: Sequence[str] = ()) -> str | None:
    """What protects a (workspace-relative) path: the protected directory or file it
    lies in or is (`vendor/lib/.git`, `.workbench`, `sub/pyproject.toml`), the one of
    `files` (the run's own files and directories) it lies in or is, or None.

    The path is normalised lexically first (`./x`, `a/../x`, `//x`); names compare
    casefolded."""
    normal = as_path(path)
    parts = normal.split("/")
    for i, part in enumerate(parts):
        if part.strip().casefold() in PROTECTED_DIRS:
            return "/".join(parts[: i + 1])
    if parts[-1].strip().casefold() in PROTECTED_NAMES:
        return normal
    folded = normal.casefold()
    for file in files:
        mine = as_path(file).casefold()  # normalised: no trailing slash
        if folded == mine or folded.startswith(mine + "/"):
            return file
    return None


def string_values(value: Any) -> Iterator[str]:
    """Every string in an argument value, nested lists and objects included."""
    if isinstance(value, str):
        if len(value) <= _MAX_PATH_TEXT:
            yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from string_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from string_values(item)


def protected_target(
    tool_name: str,
    args: Mapping[str, Any],
    files: Sequence[str] = (),
    *,
    builtin: bool = True,
    root: Path | None = None,
) -> str | None:
    """The first argument of a changing call that names a protected path, normalised.

    A built-in's path arguments are judged (its other arguments are text it writes);
    for any other tool every string argument is, as a path or a `file://` URI. With
    `root` (the workspace), an argument is judged both as written and with its
    symlinks followed."""
    if builtin and tool_name in READING_TOOLS:
        return None
    for name, value in args.items():
        if builtin and style_of(name) != "path":
            continue
        for text in string_values(value):
            for form in _forms(text, root):
                if protected_root(form, files):
                    return form
    return None


def _forms(text: str, root: Path | None) -> Iterator[str]:
    """The path `text` names, as written and (inside `root`) with its links followed."""
    lexical = as_path(text, root)
    yield lexical
    if root is None or "\x00" in text:  # no such path (realpath would raise)
        return
    absolute = lexical if lexical.startswith("/") else f"{root.as_posix()}/{lexical}"
    real = as_path(os.path.realpath(absolute), root)
    if real != lexical:
        yield real


def names_protected(pattern: CallPattern, target: str, files: Sequence[str] = ()) -> bool:
    """Whether a path glob of `pattern` names `target`'s protection literally: it is
    the protected file or directory, or starts with the directory and '/'."""
    root = protected_root(target, files)
    mine = as_path(root).casefold() if root is not None else None
    return mine is not None and any(
        style_of(name) == "path"
        and (glob.casefold() == mine or glob.casefold().startswith(mine + "/"))
        for name, glob in pattern.args
    )


def protection_warning(
    tool_name: str,
    args: Mapping[str, Any],
    files: Sequence[str] = (),
    *,
    builtin: bool = True,
    root: Path | None = None,
) -> str | None:
    """One line for the permission dialog when the call changes a protected path."""
    target = protected_target(tool_name, args, files, builtin=builtin, root=root)
    if target is None:
        return None
    protector = protected_root(target, files)
    assert protector is not None  # the target is the form that was found protected
    what = _HOLDS.get(
        posixpath.basename(protector).casefold(),
        "this run's own files (its permission rules, MCP config or sessions)",
    )
    return f"Protected path: this call changes {target}, which holds {what}."
