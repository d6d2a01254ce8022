"""Suite-wide test setup: sessions recorded by tests go to a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _sessions_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every run a test records lands in a temp dir, never the user's data directory."""
    directory = tmp_path_factory.mktemp("sessions")
    monkeypatch.setenv("WORKBENCH_SESSIONS_DIR", str(directory))
    return directory
