"""Suite-wide test setup: sessions recorded by tests go to a temporary directory."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # tests/workbench/test_pytest_plugin.py runs pytest inside pytest


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers a core. Many tests wait on a process they started (a
    server, an agent, a real client) as much as they compute; with one worker a core,
    the cores sat idle about 40% of the suite. At most 8: each worker collects the
    whole suite again."""
    return min(2 * (os.cpu_count() or 1), 8)


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "todo_agent"


@pytest.fixture(autouse=True)
def _sessions_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every run a test records lands in a temp dir, never the user's data directory."""
    directory = tmp_path_factory.mktemp("sessions")
    monkeypatch.setenv("WORKBENCH_SESSIONS_DIR", str(directory))
    return directory


@pytest.fixture
def todo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of examples/todo_agent as the current directory (its tools write
    tasks.json where they run; its workbench.toml is read from there)."""
    project = tmp_path / "todo_agent"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("tasks.json", "__pycache__"))
    monkeypatch.chdir(project)
    return project
