"""Runtime test configuration.

`tests/core/helpers.py` is loaded under the unique module name `core_helpers`, so
the tests can `from core_helpers import ...` whatever other test folders put on
sys.path (a plain `helpers` module could clash with another folder's).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if "core_helpers" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "core_helpers", Path(__file__).with_name("helpers.py")
    )
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["core_helpers"] = _module
    _spec.loader.exec_module(_module)
