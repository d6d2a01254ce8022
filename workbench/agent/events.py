"""What the loop reports: provider stream events and the agent's own lifecycle events.

Events are frozen pydantic models discriminated by `type`, so the bus can carry
them, the recorder can write them as JSON lines, and replay can read them back.
Each carries `timestamp` (epoch ms, monotonic within a process), so any stage of
any call can be timed from the stream alone.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workbench.agent.clock import now_ms
from workbench.agent.tool import AgentToolResult
from workbench.agent.types import AssistantMessage, Message, ToolResultMessage


class Event(BaseModel):
    """Base of every event on the bus."""

    model_config = ConfigDict(frozen=True)

    timestamp: float = Field(default_factory=now_ms)


# -- provider stream events ----------------------------------------------------------

AssistantMessageEventType = Literal[
    "start",
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
    "done",
    "error",
]


class AssistantMessageEvent(Event):
    """One step of a provider's streamed reply.

    `partial` is the message so far (for every type but done/error), `message` the
    final one (done/error), `content_index` the block a delta belongs to.
    """

    type: AssistantMessageEventType
    partial: AssistantMessage | None = None
    content_index: int | None = None
    delta: str | None = None
    message: AssistantMessage | None = None


# -- agent events --------------------------------------------------------------------


class AgentStartEvent(Event):
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(Event):
    type: Literal["agent_end"] = "agent_end"
    messages: list[Message]
    """Every message this run added, in order."""


class TurnStartEvent(Event):
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(Event):
    type: Literal["turn_end"] = "turn_end"
    message: Message
    tool_results: list[ToolResultMessage]


class MessageStartEvent(Event):
    type: Literal["message_start"] = "message_start"
    message: Message


class MessageUpdateEvent(Event):
    type: Literal["message_update"] = "message_update"
    message: AssistantMessage
    assistant_message_event: AssistantMessageEvent


class MessageEndEvent(Event):
    type: Literal["message_end"] = "message_end"
    message: Message


class ToolExecutionStartEvent(Event):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


ArgumentStage = Literal["parse", "lookup", "prepare", "validate"]
"""The steps of a call's argument pipeline, in order; a failure names the one it failed at."""


class ToolArgumentsEvent(Event):
    """Workbench addition: every stage of one call's argument pipeline."""

    type: Literal["tool_arguments"] = "tool_arguments"
    tool_call_id: str
    tool_name: str
    raw: str | None = None
    """The argument string exactly as the model produced it (None if the provider had none)."""
    parsed: dict[str, Any] | None = None
    prepared: dict[str, Any] | None = None
    """After the tool's `prepare_arguments` (equal to parsed when it has none)."""
    validated: dict[str, Any] | None = None
    """The validated parameters, dumped as JSON."""
    failed_stage: ArgumentStage | None = None
    error: str | None = None
    edited: bool = False
    """The pipeline ran again on arguments a person edited after it failed (`raw` is
    then the edit as JSON); the model's own attempt is the call's earlier event."""


class ToolExecutionPhaseEvent(Event):
    """Workbench addition: a prepared call enters a phase after its preflight.

    "executing" is emitted just before `execute` runs (in a parallel batch that is
    after every call's preflight); "after_hook" just before `after_tool_call`.
    """

    type: Literal["tool_execution_phase"] = "tool_execution_phase"
    tool_call_id: str
    tool_name: str
    phase: Literal["executing", "after_hook"]


class ToolExecutionUpdateEvent(Event):
    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: AgentToolResult
    unrecorded: int = 0
    """Workbench addition: updates of this call before this one that a session
    recording left out (it records at a bounded rate); always 0 live."""


class ToolExecutionEndEvent(Event):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    injected: bool = False
    """Workbench addition: the result was supplied by a person instead of executing."""
    duration_ms: float | None = None
    """How long `execute()` took (monotonic clock); None when it never ran."""


class HandCallEvent(Event):
    """Workbench addition: a person calls one tool by hand (`Agent.call_tool`).
    `message` holds the call; it is not part of the transcript (see `agent.by_hand`)."""

    type: Literal["hand_call"] = "hand_call"
    message: AssistantMessage


class HandCallEndEvent(Event):
    """Workbench addition: the call by hand ended; `message` is its result, which the
    model never sees."""

    type: Literal["hand_call_end"] = "hand_call_end"
    message: ToolResultMessage


AnyAgentEvent = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolArgumentsEvent
    | ToolExecutionPhaseEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | HandCallEvent
    | HandCallEndEvent
)
"""Every event the loop emits, as a plain union."""

AgentEvent = Annotated[AnyAgentEvent, Field(discriminator="type")]
