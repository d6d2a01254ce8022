"""Session tests: every recording goes to a temporary directory, never the user's data dir.

`tests/sessions/session_helpers.py` is loaded under that unique name so tests can
`from session_helpers import ...` without clashing with other folders' helpers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from workbench.sessions.header import SESSIONS_DIR_ENV

if "session_helpers" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "session_helpers", Path(__file__).with_name("session_helpers.py")
    )
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["session_helpers"] = _module
    _spec.loader.exec_module(_module)


@pytest.fixture(autouse=True)
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Default-located sessions land here during a test."""
    directory = tmp_path / "sessions"
    monkeypatch.setenv(SESSIONS_DIR_ENV, str(directory))
    return directory
