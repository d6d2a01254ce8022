"""What the screen shows, as plain data: turns, timeline items, one record per tool call.

These records are built only by the fold (`fold.py`); widgets read them. Each
record carries a `rev` that the fold bumps on every change, so a widget can tell
what to redraw without diffing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.agent.events import ArgumentStage
from workbench.agent.types import ImageContent, TextContent, Usage, result_text
from workbench.bus_events import (
    PermissionDecisionEvent,
    PermissionRequestEvent,
    ProviderRequestEvent,
    ProviderResponseEvent,
    ResponseReleasedEvent,
    StepPausedEvent,
)

CallStatus = Literal[
    "streaming",  # the model is still writing the call
    "requested",  # the runtime has it, arguments not checked yet
    "invalid",  # parse, lookup, prepare or validate failed; execute never runs
    "validated",  # arguments valid, waiting for its batch to execute
    "awaiting_approval",
    "paused",  # stopped at a step or breakpoint
    "running",
    "after_hook",
    "done",
    "error",
    "denied",
    "aborted",
]
"""Where a call is now, as its card's badge shows it."""
FINAL_STATUSES = frozenset({"invalid", "done", "error", "denied", "aborted"})

RunState = Literal[
    "idle",
    "streaming",
    "running_tools",
    "awaiting_approval",
    "paused",
    "finished",
    "aborted",
    "error",
]


NoticeLevel = Literal["info", "warning", "error"]
"""How a timeline notice is shown."""

CallPhase = Literal["preflight", "approval", "paused", "queued", "executing", "after_hook", "end"]
"""A stretch of a call's time, as its lanes and times show it: preflight (the argument
pipeline and the hooks), approval, paused, queued (ready, waiting for its batch),
executing, after_hook; "end" closes the last."""
WAITING_PHASES: frozenset[CallPhase] = frozenset({"approval", "paused", "queued"})
"""Phases in which a call waits (on a person, or on its batch) rather than works."""

CallEntry = tuple[float, str, str, CallPhase | None]
"""One line of a call's own history: (timestamp, label, detail, the phase the call
enters then, or None)."""
CallEvent = tuple[float, str, str]
"""One line of a call's own history, for the inspector: (timestamp, label, detail)."""


@dataclass
class ToolCallRecord:
    id: str
    name: str
    turn: int
    batch_index: int
    """Position of the call in its assistant message."""
    status: CallStatus = "streaming"
    raw: str | None = None
    parsed: dict[str, Any] | None = None
    prepared: dict[str, Any] | None = None
    validated: dict[str, Any] | None = None
    failed_stage: ArgumentStage | None = None
    arg_error: str | None = None
    output: str = ""
    """The latest `on_update` text (a tool usually sends everything so far)."""
    update_count: int = 0
    unrecorded: int = 0
    """Of those updates, how many a session recording left out (replay only)."""
    content: list[TextContent | ImageContent] | None = None
    """The result's content once the call has ended (None before)."""
    details: Any = None
    """The result's details. The two are kept, not the result model: its blocks and
    details are the ones the transcript holds, so a finished call keeps one object of
    its own alive for them (the list) instead of four."""
    is_error: bool = False
    injected: bool = False
    structured: Any = None
    """The result's structured content (for tools with an output schema)."""
    request: PermissionRequestEvent | None = None
    decision: PermissionDecisionEvent | None = None
    pause: StepPausedEvent | None = None
    status_before_pause: CallStatus | None = None
    edited_args: dict[str, Any] | None = None
    """The arguments that ran when a person edited the model's (the latest edit)."""
    edited_in: str | None = None
    """Where that edit was made: "the permission dialog", "a pause", "failed arguments"."""
    injected_at: str | None = None
    """For an injected result: "before it ran" or "in place of its error result"."""
    by_hand: bool = False
    """A person called it by hand (`Agent.call_tool`); the model never sees it."""
    started_at: float | None = None
    """tool_execution_start: the call entered preflight."""
    executing_at: float | None = None
    ended_at: float | None = None
    history: list[CallEntry] = field(default_factory=list)
    """The call's own history, in order (written by `note`)."""
    rev: int = 0

    def note(
        self, timestamp: float, label: str, detail: str = "", phase: CallPhase | None = None
    ) -> None:
        """Add a line to the call's history; `phase`: the call enters that phase then."""
        self.history.append((timestamp, label, detail, phase))

    @property
    def events(self) -> list[CallEvent]:
        """The call's history in order: (timestamp, label, detail)."""
        return [(timestamp, label, detail) for timestamp, label, detail, _ in self.history]

    @property
    def phases(self) -> list[tuple[CallPhase, float]]:
        """(phase, start timestamp) in order."""
        return [(phase, timestamp) for timestamp, _, _, phase in self.history if phase is not None]

    @property
    def model_args(self) -> dict[str, Any] | None:
        """The arguments as the model's own went through the pipeline (as far as they got)."""
        if self.validated is not None:
            return self.validated
        return self.prepared if self.prepared is not None else self.parsed

    @property
    def ran_args(self) -> dict[str, Any] | None:
        """The arguments the call runs (or ran) with: a person's edit, else the model's."""
        return self.edited_args if self.edited_args is not None else self.model_args

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def duration_ms(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return self.ended_at - self.started_at

    def elapsed_ms(self, now_ms: float) -> float | None:
        """Time since it started: up to its end, or up to `now_ms` while it runs."""
        if self.started_at is None:
            return None
        end = self.ended_at if self.ended_at is not None else now_ms
        return max(0.0, end - self.started_at)

    def waited_ms(self, now_ms: float) -> float:
        """Time it spent waiting, not working: for approval, at a pause, or queued
        behind its batch (an unfinished wait runs to `now_ms`)."""
        waited, since = 0.0, None
        for timestamp, _, _, phase in self.history:
            if phase is None:
                continue
            if since is not None:
                waited += timestamp - since
            since = timestamp if phase in WAITING_PHASES else None
        if since is not None:
            end = self.ended_at if self.ended_at is not None else now_ms
            waited += max(0.0, end - since)
        return waited

    def times(self, now_ms: float) -> tuple[float, float] | None:
        """(working, waiting) milliseconds since it started; None before it starts.
        Working is everything but the waits: the argument pipeline, execute, the
        after hook."""
        elapsed = self.elapsed_ms(now_ms)
        if elapsed is None:
            return None
        waited = self.waited_ms(now_ms) if self.history else 0.0
        return max(0.0, elapsed - waited), waited

    @property
    def result_text(self) -> str:
        if self.content is None:
            return ""
        return result_text(self.content)


@dataclass
class Block:
    kind: Literal["text", "thinking", "toolCall"]
    text: str = ""
    tool_call_id: str | None = None

    @property
    def type(self) -> str:
        """Its kind, by the name a message's blocks give it (`agent.stream_apply` reads it)."""
        return self.kind


@dataclass
class TimelineItem:
    kind: Literal["user", "assistant", "notice"]
    turn: int
    blocks: list[Block] = field(default_factory=list)
    streaming: bool = False
    stop_reason: str | None = None
    error: str | None = None
    level: NoticeLevel = "info"
    """For notices."""
    steering: bool = False
    """A user message injected while the run was going (steering or follow-up)."""
    by_hand: bool = False
    """An assistant-like item holding a call a person made by hand."""
    timestamp: float = 0.0
    rev: int = 0

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if b.kind == "text")

    @property
    def tool_call_ids(self) -> list[str]:
        return [b.tool_call_id for b in self.blocks if b.tool_call_id is not None]


@dataclass
class TurnRecord:
    index: int
    started_at: float
    ended_at: float | None = None
    model_started_at: float | None = None
    """The assistant message started streaming (the request was answered)."""
    model_ended_at: float | None = None
    paused_ms: float = 0.0
    """Time paused before this turn's model request (step mode)."""
    input_tokens: int = 0
    output_tokens: int = 0
    tool_call_ids: list[str] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    run: int = 0
    """Which run of the session (1, 2, ...) the turn belongs to."""
    replies: list[tuple[str, str, Usage]] = field(default_factory=list)
    """(provider, model, usage) of each model reply of the turn: what it cost."""


@dataclass
class NetworkRecord:
    request: ProviderRequestEvent
    turn: int
    response: ProviderResponseEvent | None = None
    released: ResponseReleasedEvent | None = None
    """Proxy mode: the response as the agent received it."""
