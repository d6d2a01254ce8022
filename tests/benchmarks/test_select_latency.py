"""The select-latency benchmark runs, and counts what it says it counts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "select_latency.py"


def test_the_benchmark_prints_latency_and_layouts() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--size", "100x30"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    header = re.search(r"(\d+) selections of the demo's calls at 100x30", done.stdout)
    selections = int(header.group(1))
    assert selections >= 5  # every call of the demo, once
    assert re.search(r"until painted and settled: \d+ ms \(median; \d+ to \d+\)", done.stdout)
    assert re.search(r"layouts of the screen:\s+\d+\.\d a selection", done.stdout)
