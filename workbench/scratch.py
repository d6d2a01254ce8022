"""Where tools run: a directory the user names, or a fresh scratch copy of a scenario's files."""

from __future__ import annotations

import tempfile
from pathlib import Path

from workbench.permissions.protected import as_path, protected_root
from workbench.providers.scripted import Scenario

NEVER_SEEDED_NAMES = ("mcp.json", ".mcp.json")
"""MCP client configs (Claude Desktop, Cursor, VS Code spell them so): no scenario brings one,
besides the protected paths (`workbench.permissions.protected`)."""


def scratch_workspace(scenario: Scenario | None = None, parent: Path | None = None) -> Path:
    """Create a new temporary workspace seeded with the scenario's files."""
    root = Path(tempfile.mkdtemp(prefix="workbench-", dir=parent))
    if scenario is not None:
        seed(root, scenario.workspace_files)
    return root


def seed_refusal(rel: str) -> str | None:
    """Why a scenario may not write the file `rel` (None: it may).

    A scenario is data anyone can hand you; what it seeds must never become the
    permissions or the configuration of the run it seeds: no `.workbench/`, no `.git`,
    no `workbench.toml` or `pyproject.toml`, no MCP config, at any depth and in any
    spelling (`./x`, `a/../x`, `.WORKBENCH`)."""
    normal = as_path(rel)
    if normal.startswith("/") or normal == ".." or normal.startswith("../"):
        return "it would be written outside the workspace"
    root = protected_root(normal)
    if root is not None:
        return f"{root} holds permissions or configuration, which a scenario never brings"
    if normal.rsplit("/", 1)[-1].casefold() in NEVER_SEEDED_NAMES:
        return "it is an MCP config, which a scenario never brings"
    return None


def seed(root: Path, files: dict[str, str]) -> None:
    """Write `files` (relative path -> text) under `root`.

    Raises:
        ValueError: a path that leaves the workspace or is protected (`seed_refusal`),
            named; nothing is written then.
    """
    base = root.resolve()
    for rel in files:
        why = seed_refusal(rel)
        if why is not None:
            raise ValueError(f"scenario file {rel!r} refused: {why}")
    for rel, text in files.items():
        target = (base / rel).resolve()
        if not target.is_relative_to(base):
            raise ValueError(f"scenario file {rel!r} would be written outside the workspace")
        if target != base / as_path(rel):  # a link seeded earlier points elsewhere
            raise ValueError(f"scenario file {rel!r} would be written through a symlink")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
