"""The UI throughput benchmark still runs, and its statistics say what they claim."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.ui_throughput import median_interval, timing_cost

pytestmark = pytest.mark.bench

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ui_throughput.py"
TINY = ["--turns", "2", "--calls", "2", "--updates", "2", "--text", "80", "--repeat", "1"]


def test_the_median_interval_is_the_binomial_order_statistics() -> None:
    # 31 values: the 10th smallest to the 10th largest covers the median 97.1 % of the time
    low, high, coverage = median_interval([float(v) for v in range(31, 0, -1)])
    assert (low, high) == (10.0, 22.0)
    assert coverage == pytest.approx(0.9706, abs=1e-4)
    # 11 values: the 3rd would cover only 93.5 %, so the 2nd
    assert median_interval([float(v) for v in range(11)])[:2] == (1.0, 9.0)
    assert median_interval([1.0, 2.0, 3.0, 4.0, 5.0]) is None  # even min..max covers 93.75 %


def run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_the_benchmark_runs_and_prints_its_figures() -> None:
    out = run(*TINY)
    events = int(re.search(r"events per run:\s+([\d,]+)", out).group(1).replace(",", ""))
    assert events > 40
    ratio = float(re.search(r"ratio:\s+([\d.]+)", out).group(1))
    assert 0.1 < ratio < 100  # a tiny run is mostly the screen's fixed costs, whatever the load
    assert re.search(r"last event on screen:\s+\d+ ms", out)


def test_the_attribution_accounts_for_the_apps_work() -> None:
    out = run(*TINY, "--attribute")
    for part in ("fold", "refreshes", "refresh until painted", "garbage collection"):
        assert re.search(rf"{part}.*\d+\.\d ms", out), part
    assert re.search(r"\d+ paints, \d+ layouts of the screen", out)
    assert re.search(r"the app's own work: -?\d+ ms of the run", out)
    assert re.search(r"timing's own \d+ ms taken off", out)


def test_the_timing_calibration_measures_what_the_stats_wrapper_adds() -> None:
    cost = timing_cost(calls=2_000, rounds=3)
    assert 0.0 < cost < 1e-4  # a fraction of a microsecond to some microseconds a call
