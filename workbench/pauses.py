"""A pause of the stepper, and how to go on from it.

Each pause point makes a `Pause` holding what the run stopped on (the call, its
arguments, the breakpoint, the failed stage or the error result); `Stepper.resume`
answers it with a `Resume`: step, continue, run to end, edit the arguments or inject a
result, as far as that point allows (`Pause.actions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from workbench.agent import AgentTool, AgentToolResult, ToolCall, run_argument_pipeline
from workbench.agent.clock import now_ms
from workbench.agent.events import ArgumentStage
from workbench.breakpoints import StepperError
from workbench.bus_events import PausePoint

ResumeKind = Literal["step", "continue", "run_to_end", "edit", "inject"]

_ALLOWED: dict[str, tuple[str, ...]] = {
    "before_model": ("step", "continue", "run_to_end"),
    "before_tool": ("step", "continue", "run_to_end", "edit", "inject"),
    "after_tool": ("step", "continue", "run_to_end", "inject"),
    "invalid_arguments": ("step", "continue", "run_to_end", "edit"),
}


@dataclass(frozen=True)
class Resume:
    """How to go on from a pause."""

    kind: ResumeKind
    args: dict[str, Any] | None = None
    """For "edit": the new arguments."""
    result: str | None = None
    """For "inject": the result text the model will see."""
    is_error: bool = False
    """For "inject": whether that result is an error."""

    @classmethod
    def edit(cls, args: dict[str, Any]) -> Resume:
        return cls("edit", args=args)

    @classmethod
    def inject(cls, result: str, *, is_error: bool = False) -> Resume:
        return cls("inject", result=result, is_error=is_error)


@dataclass(eq=False)
class Pause:
    """The run waiting at one pause point."""

    pause_id: str
    point: PausePoint
    tool_call_id: str | None = None
    tool_name: str | None = None
    args: dict[str, Any] | None = None
    breakpoint: str | None = None
    tool: AgentTool | None = None
    failed_stage: ArgumentStage | None = None
    """At failed arguments: the stage that failed."""
    tools: Sequence[AgentTool] = ()
    """At failed arguments: the tools an edit runs the pipeline against."""
    result: AgentToolResult | None = None
    """At `@error`: the error result stopped on."""
    started_ms: float = field(default_factory=now_ms)
    resume: Resume | None = None
    edited: BaseModel | None = None
    resumed: anyio.Event = field(default_factory=anyio.Event)

    @property
    def actions(self) -> tuple[str, ...]:
        """The resume actions possible here (an ACP agent's call: neither an edit nor a
        result of ours would reach the agent, which runs its calls itself)."""
        if self.tool is not None and self.tool.source == "acp":
            return tuple(a for a in _ALLOWED[self.point] if a not in ("edit", "inject"))
        return _ALLOWED[self.point]


def rerun_pipeline(pause: Pause, args: dict[str, Any] | None) -> BaseModel:
    """The validated arguments an edit at failed arguments runs with (the whole
    pipeline, as the model's arguments went through it); raises when they fail too."""
    if pause.failed_stage == "lookup":
        raise StepperError(
            f"There is no tool {pause.tool_name!r}: editing its arguments cannot help "
            "(F10 or F5 send the error to the model)"
        )
    if not isinstance(args, dict):
        raise StepperError("The arguments must be a JSON object")
    call = ToolCall(id=pause.tool_call_id or "", name=pause.tool_name or "", arguments=args)
    outcome = run_argument_pipeline(call, pause.tools)
    if outcome.error is not None:
        raise StepperError(str(outcome.error))
    assert outcome.validated is not None
    return outcome.validated
