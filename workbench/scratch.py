"""Where tools run: a directory the user names, or a fresh scratch copy of a scenario's files."""

from __future__ import annotations

import tempfile
from pathlib import Path

from workbench.providers.scripted import Scenario


def scratch_workspace(scenario: Scenario | None = None, parent: Path | None = None) -> Path:
    """Create a new temporary workspace seeded with the scenario's files."""
    root = Path(tempfile.mkdtemp(prefix="workbench-", dir=parent))
    if scenario is not None:
        seed(root, scenario.workspace_files)
    return root


def seed(root: Path, files: dict[str, str]) -> None:
    """Write `files` (relative path -> text) under `root`, refusing paths that leave it."""
    base = root.resolve()
    for rel, text in files.items():
        target = (base / rel).resolve()
        if not target.is_relative_to(base):
            raise ValueError(f"scenario file {rel!r} would be written outside the workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
