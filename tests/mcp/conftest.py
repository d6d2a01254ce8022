"""MCP tests: keep each test's session files and config file in its own tmp dir."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "no-config.toml"))
