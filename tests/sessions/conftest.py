"""Session tests: every recording goes to a temporary directory, never the user's data dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.sessions.header import SESSIONS_DIR_ENV



@pytest.fixture(autouse=True)
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Default-located sessions land here during a test."""
    directory = tmp_path / "sessions"
    monkeypatch.setenv(SESSIONS_DIR_ENV, str(directory))
    return directory
