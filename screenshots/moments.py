"""Key moments of the demo, driven with Pilot: shared by the screenshot script and the
snapshot tests, so the README's pictures and the tested screens are the same screens.

Each moment builds the real app on the built-in demo (scripted model, real tools, a
fresh workspace) and drives it with the keyboard to the moment it names.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.scratch import seed
from workbench.widgets.app import WorkbenchApp, make_app


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await pilot.pause(0.02)
    await pilot.pause()


def _modal_for(app: WorkbenchApp, tool: str) -> bool:
    from workbench.widgets.permission_modal import PermissionModal

    return isinstance(app.screen, PermissionModal) and app.screen.record.name == tool


async def _settle(pilot: Any) -> None:
    """Hold still for the picture: no more auto-selection, no passing toasts."""
    app = pilot.app
    app.follow_latest = False
    app.clear_notifications()
    app._refresh_now()
    await pilot.pause()


async def permission(pilot: Any) -> None:
    """The demo asks before editing config.json."""
    app = pilot.app
    await pilot.press("enter")
    await wait_for(pilot, lambda: _modal_for(app, "edit_file"))
    await _settle(pilot)


async def mid_run(pilot: Any) -> None:
    """Paused at a breakpoint on run_command, three turns in."""
    app = pilot.app
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.pause is not None)
    await _settle(pilot)


async def _finish_and_select(pilot: Any, call_id: str) -> None:
    app = pilot.app
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=30)
    app.select_call(call_id)
    await _settle(pilot)


async def stages(pilot: Any) -> None:
    """The finished demo with the flat edit selected: raw != prepared != validated."""
    await _finish_and_select(pilot, "call_3_1")


async def validation_error(pilot: Any) -> None:
    """The finished demo with the invalid edit selected: the error pinned to its field."""
    await _finish_and_select(pilot, "call_2_1")


async def aborted(pilot: Any) -> None:
    """ctrl+c at a breakpoint before run_command: that call and the one after it are aborted."""
    app = pilot.app
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.pause is not None)
    await pilot.press("ctrl+c")
    await wait_for(pilot, lambda: app.view_state.run_state == "aborted")
    app.select_call("call_4_1")
    await _settle(pilot)


async def paused_step(pilot: Any) -> None:
    """Step mode: stepped past the first model request, paused before the first tool."""
    app = pilot.app
    await pilot.press("f6")
    await wait_for(pilot, lambda: app.view_state.step_mode)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.pause is not None)
    await pilot.press("f10")
    await wait_for(
        pilot,
        lambda: app.view_state.pause is not None and app.view_state.pause.point == "before_tool",
    )
    await _settle(pilot)


@dataclass
class Moment:
    name: str
    drive: Callable[[Any], Awaitable[None]]
    options: dict[str, Any] = field(default_factory=dict)


MOMENTS = [
    Moment("permission", permission),
    Moment("mid_run", mid_run, {"approve": "all", "breakpoints": ["run_command"]}),
    Moment("stages", stages, {"approve": "all"}),
    Moment("validation_error", validation_error, {"approve": "all"}),
    Moment("aborted", aborted, {"approve": "all", "breakpoints": ["run_command"]}),
    Moment("paused_step", paused_step),
]
SIZES = {"small": (80, 24), "wide": (200, 60)}


def build_app(moment: Moment, workspace: Path) -> WorkbenchApp:
    """The demo app for `moment`, in `workspace` (seeded with the demo's files)."""
    scenario = Scenario.load("demo")
    seed(workspace, scenario.workspace_files)
    options = RunOptions(
        scenario=scenario,
        workspace=workspace,
        pace=math.inf,
        record=False,
        simulated_wire=True,
        **moment.options,
    )
    return make_app(build_runtime(options), subtitle="demo workspace")
