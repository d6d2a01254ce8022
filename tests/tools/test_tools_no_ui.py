"""The tools, the permission gate and the stepper never load Textual or Rich."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module", ["workbench.tools", "workbench.permissions", "workbench.stepper"]
)
def test_module_loads_no_ui(module: str) -> None:
    probe = (
        f"import {module}, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
