"""Protected paths: the workbench's own settings, the rules file, and git's internals.

A model that can write `.workbench/rules.toml` can give itself every permission
for the next run, and one that can write `.git/hooks/pre-commit` runs code the
next time the user commits. So a call that may change a file under `.workbench/`
or `.git/`, or the run's rules file wherever it lies in the workspace (any tool
but the read-only built-ins, given a path-like argument there), is never allowed
by a broad rule: only a rule whose path glob names that directory or file
(`write_file(path=".git/hooks/**")`) allows it outright. Any other allow becomes a
question for a person, and a headless run that cannot ask refuses it. Deny rules
still deny.

Everything here is pure: it takes the arguments as the gate judges them
(workspace-relative canonical paths) and says what is protected and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.permissions.patterns import CallPattern, style_of

PROTECTED_DIRS = (".workbench", ".git")
"""Top-level workspace directories model tools may not change without a rule naming them."""

READING_TOOLS = ("read_file", "list_directory", "search_files")
"""The built-ins that never change a file (the only tools exempt from protection)."""

_HOLDS = {
    ".workbench": "the workbench's own rules and settings",
    ".git": "git's internals (hooks there run on your next commit)",
}


def protected_root(path: str, files: Sequence[str] = ()) -> str | None:
    """What protects a workspace-relative path: a protected directory, one of
    `files` (e.g. the rules file), or None."""
    first = path.split("/", 1)[0].casefold()
    return next((d for d in PROTECTED_DIRS if first == d), None) or (
        path if path in files else None
    )


def protected_target(
    tool_name: str, args: Mapping[str, Any], files: Sequence[str] = ()
) -> str | None:
    """The first path-like argument of a changing call that is protected."""
    if tool_name in READING_TOOLS:
        return None
    for name, value in args.items():
        if style_of(name) == "path" and isinstance(value, str) and protected_root(value, files):
            return value
    return None


def names_protected(pattern: CallPattern, target: str, files: Sequence[str] = ()) -> bool:
    """Whether a path glob of `pattern` names `target`'s protection literally: it is
    the protected file or directory, or starts with the directory and '/'."""
    root = protected_root(target, files)
    return root is not None and any(
        style_of(name) == "path" and (glob == root or glob.startswith(root + "/"))
        for name, glob in pattern.args
    )


def protection_warning(
    tool_name: str, args: Mapping[str, Any], files: Sequence[str] = ()
) -> str | None:
    """One line for the permission dialog when the call changes a protected path."""
    target = protected_target(tool_name, args, files)
    if target is None:
        return None
    what = _HOLDS.get(protected_root(target, files) or "", "this run's permission rules")
    return f"Protected path: this call changes {target}, which holds {what}."
