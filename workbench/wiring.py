"""The one wiring: what every run puts between an agent and its tools and model.

`build_runtime` (the CLI, the app, re-runs and forks), `embed.attach` (your own agent)
and the proxy's conversations (a foreign agent) all record, gate, step and limit an
agent through these functions, so each run is watched the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agent import Agent
from workbench.agent.config import BeforeToolCall
from workbench.checkpointer import attach_checkpoints
from workbench.permissions import PermissionGate, chain_before
from workbench.sessions.recorder import Recorder, start_recording
from workbench.stepper import Breakpoint, Stepper
from workbench.stream_report import ReportedStream, reports_itself

if TYPE_CHECKING:
    from workbench.run_limits import TurnLimit
    from workbench.workspace_scan import CheckpointCaps


def record_agent(
    agent: Agent,
    workspace: Path,
    gate: PermissionGate,
    *,
    path: Path | None,
    checkpoints: CheckpointCaps | None = None,
    **header: Any,
) -> Recorder:
    """Record `agent`'s runs to `path` (None: a new session file), with the workspace's
    files as far as `gate` lets them be read. Called before anything else listens on
    the bus, so an event is on disk before anyone acts on it. `header`: what else
    `start_recording` writes (scenario, fork, setup)."""
    recorder = start_recording(agent, workspace=workspace, path=path, **header)
    attach_checkpoints(agent, recorder, workspace, checkpoints, gate.may_read)
    return recorder


def supervise(
    agent: Agent,
    gate: PermissionGate,
    *,
    step: bool = False,
    breakpoints: Sequence[str] | dict[str, Breakpoint] = (),
    first: BeforeToolCall | None = None,
    report: bool = True,
    error_pause: bool = True,
) -> Stepper:
    """Put the gate, then a stepper, between `agent` and its tool calls and model requests:
    the one wiring of every run (`build_runtime`, `embed.attach`, the proxy's conversations).

    `first` (your own `before_tool_call`) is asked before the gate. The stepper also
    pauses before model requests and after failed calls (and, with `error_pause`, at
    error results). With `report`, a stream_fn that does not publish its own requests
    is wrapped so the network view shows them; the stepper's pause comes before that,
    so a paused request has not been shown as sent. `breakpoints`: texts, or a table
    shared with other steppers (see `Stepper`).
    """
    gate.publish = agent.publish
    stepper = Stepper(
        publish=agent.publish,
        enabled=step,
        breakpoints=breakpoints if isinstance(breakpoints, dict) else list(breakpoints),
    )
    agent.before_tool_call = chain_before(first, gate, stepper.before_tool_call)
    stream = agent.stream_fn
    if report and not reports_itself(stream):  # a stream_fn of your own: F4 shows its calls
        stream = ReportedStream(stream, agent.publish)
    agent.stream_fn = stepper.wrap_stream_fn(stream)
    stepper.attach(agent, error_pause=error_pause)
    return stepper


def limit_turns(agent: Agent, max_turns: int | None) -> TurnLimit | None:
    """Put a `TurnLimit` on `agent` (after its own `should_stop_after_turn`), or None."""
    if max_turns is None:
        return None
    from workbench.run_limits import TurnLimit

    limit = TurnLimit(max_turns, agent.publish, then=agent.should_stop_after_turn)
    agent.should_stop_after_turn = limit.should_stop
    agent.subscribe(limit.on_event)
    return limit
