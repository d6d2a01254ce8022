"""Helpers for the session tests: record a real run, and small scripted scenarios."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, Runtime, build_runtime
from workbench.view.fold import ViewState
from workbench.workspace import seed

READ_A = {
    "name": "read-a",
    "prompt": "what is in a.txt?",
    "workspace_files": {"a.txt": "alpha\n"},
    "turns": [
        {
            "text": "Reading it.",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "list_directory", "arguments": {"path": "."}},
            ],
        },
        {"text": "It says alpha."},
    ],
}


def scenario(data: dict[str, Any] | str = "demo") -> Scenario:
    return Scenario.load(data) if isinstance(data, str) else Scenario.model_validate(data)


def runtime_for(workspace: Path, data: dict[str, Any] | str = "demo", **options: Any) -> Runtime:
    """A recording runtime on `data` in `workspace` (seeded), approving everything."""
    loaded = scenario(data)
    seed(workspace, loaded.workspace_files)
    options.setdefault("approve", "all")
    return build_runtime(
        RunOptions(
            scenario=loaded, workspace=workspace, pace=math.inf, tool_abort_grace=0.2, **options
        )
    )


async def record_run(
    workspace: Path, data: dict[str, Any] | str = "demo", **options: Any
) -> tuple[Runtime, ViewState]:
    """Run the scenario's prompt to the end, recording; returns the runtime and the live fold."""
    runtime = runtime_for(workspace, data, **options)
    live = ViewState()
    runtime.agent.subscribe(lambda event, _signal: live.apply(event))
    await runtime.agent.prompt(runtime.prompt)
    return runtime, live
