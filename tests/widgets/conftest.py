"""UI test harness: build the real app on the real runtime, offline, in a temp workspace."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.scratch import seed
from workbench.widgets.app import WorkbenchApp, make_app
from workbench.widgets.screen_stats import ScreenStats


@pytest.fixture
def make_test_app(tmp_path: Path) -> Callable[..., WorkbenchApp]:
    """`make_test_app(scenario="demo", pace=inf, stats=None, **run_options)` -> a
    WorkbenchApp (`stats`: a `ScreenStats` the app fills in)."""

    def factory(
        scenario: str | Scenario = "demo",
        *,
        pace: float = math.inf,
        stats: ScreenStats | None = None,
        **options: Any,
    ) -> WorkbenchApp:
        loaded = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
        seed(tmp_path, loaded.workspace_files)
        runtime = build_runtime(
            RunOptions(
                scenario=loaded, workspace=tmp_path, pace=pace, tool_abort_grace=0.2, **options
            )
        )
        return make_app(runtime, subtitle="test workspace", stats=stats)

    return factory
