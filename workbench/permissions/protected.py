"""Protected paths: the workbench's own settings and git's internals.

A model that can write `.workbench/rules.toml` can give itself every permission
for the next run, and one that can write `.git/hooks/pre-commit` runs code the
next time the user commits. So a call that may change a file under `.workbench/`
or `.git/` (any tool but the read-only built-ins, given a path-like argument
there) is never allowed by a broad rule: only a rule whose path glob starts with
that directory by name (`write_file(path=".git/hooks/**")`) allows it outright.
Any other allow becomes a question for a person, and a headless run that cannot
ask refuses it. Deny rules still deny.

Everything here is pure: it takes the arguments as the gate judges them
(workspace-relative canonical paths) and says what is protected and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.permissions.patterns import CallPattern, style_of

PROTECTED_DIRS = (".workbench", ".git")
"""Top-level workspace directories model tools may not change without a rule naming them."""

READING_TOOLS = ("read_file", "list_directory", "search_files")
"""The built-ins that never change a file (the only tools exempt from protection)."""


def protected_dir(path: str) -> str | None:
    """The protected directory a workspace-relative path lies in (or is), else None."""
    first = path.split("/", 1)[0]
    return next((d for d in PROTECTED_DIRS if first.casefold() == d), None)


def protected_target(tool_name: str, args: Mapping[str, Any]) -> str | None:
    """The first path-like argument of a changing call that lies in a protected directory."""
    if tool_name in READING_TOOLS:
        return None
    for name, value in args.items():
        if style_of(name) == "path" and isinstance(value, str) and protected_dir(value):
            return value
    return None


def names_protected(pattern: CallPattern, target: str) -> bool:
    """Whether `pattern` names `target`'s protected directory literally in a path glob."""
    wanted = protected_dir(target)
    return any(
        style_of(name) == "path" and glob.split("/", 1)[0] == wanted
        for name, glob in pattern.args
    )


def protection_warning(tool_name: str, args: Mapping[str, Any]) -> str | None:
    """One line for the permission dialog when the call changes a protected path."""
    target = protected_target(tool_name, args)
    if target is None:
        return None
    what = _HOLDS[protected_dir(target)]  # type: ignore[index]
    return f"Protected path: this call changes {target}, which holds {what}."


_HOLDS = {
    ".workbench": "the workbench's own rules and settings",
    ".git": "git's internals (hooks there run on your next commit)",
}
