"""The loop's inputs: context, configuration, hook contexts and the provider protocol."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal, Protocol, TypeAlias, TypeVar, Union, overload

from pydantic import BaseModel

from workbench.agent.abort import AbortController, AbortSignal
from workbench.agent.content_caps import DEFAULT_CAPS, ContentCaps
from workbench.agent.events import ArgumentStage, AssistantMessageEvent
from workbench.agent.tool import AgentTool, AgentToolResult
from workbench.agent.types import (
    AssistantMessage,
    Message,
    Model,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

T = TypeVar("T")
MaybeAwaitable: TypeAlias = Union[T, Awaitable[T]]  # noqa: UP007 - a generic alias needs Union


@overload
async def resolve(value: Awaitable[T]) -> T: ...
@overload
async def resolve(value: MaybeAwaitable[T]) -> T: ...
async def resolve(value: Any) -> Any:
    """Await `value` if it is awaitable: every callback may be sync or async."""
    if inspect.isawaitable(value):
        return await value
    return value


@dataclass
class AgentContext:
    """What the loop works on: the system prompt, the transcript, the tools."""

    system_prompt: str = ""
    messages: list[Message] = field(default_factory=list)
    tools: Sequence[AgentTool] = ()


@dataclass
class LlmContext:
    """What a provider receives for one request."""

    system_prompt: str
    messages: list[Message]
    tools: Sequence[AgentTool]


@dataclass
class StreamOptions:
    """Per-request options handed to a stream function."""

    signal: AbortSignal | None = None


class StreamFn(Protocol):
    """A provider. It never raises for request, network or model failures: it ends
    the stream with an `error` event whose message has `stop_reason="error"` (or
    "aborted") and an `error_message`."""

    def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]: ...


# -- hooks ---------------------------------------------------------------------------


@dataclass
class BeforeToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: BaseModel
    """The validated parameters. Mutating them changes what execute receives."""
    context: AgentContext
    tool: AgentTool | None = None


@dataclass
class BeforeToolCallResult:
    block: bool = False
    reason: str | None = None
    terminate: bool = False
    result: AgentToolResult | None = None
    """Workbench addition: answer the call with this result instead of executing it."""
    is_error: bool = False
    """With `result`: whether the supplied result is an error."""


@dataclass
class AfterToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: BaseModel
    result: AgentToolResult
    is_error: bool
    context: AgentContext
    tool: AgentTool | None = None


@dataclass
class AfterToolCallResult:
    """Fields left None keep the executed value; there is no deep merge."""

    content: list[Any] | None = None
    details: Any = None
    is_error: bool | None = None
    terminate: bool | None = None
    injected: bool | None = None
    """Workbench addition: the overriding result was written by a person (the stepper)."""


@dataclass
class ArgumentsFailedContext:
    """Workbench addition: a call whose arguments failed the pipeline (parse, lookup,
    prepare or validate), before its error result is made."""

    tool_call: ToolCall
    failed_stage: ArgumentStage
    error: str
    """What the model would be told."""
    args: dict[str, Any] | None
    """The arguments as far as the pipeline got them (prepared, else parsed)."""
    context: AgentContext


@dataclass
class ErrorResultContext:
    """Workbench addition: an error result about to become final (the call failed,
    was refused, or its arguments were invalid), before the model sees it. Results
    of aborted calls and results a person wrote are not reviewed."""

    tool_call: ToolCall
    result: AgentToolResult
    context: AgentContext


@dataclass
class TurnContext:
    """A finished turn, as `should_stop_after_turn` and `prepare_next_turn` see it."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[Message]


@dataclass
class NextTurn:
    """What `prepare_next_turn` may replace before the next request."""

    context: AgentContext | None = None
    model: Model | None = None


BeforeToolCall = Callable[
    [BeforeToolCallContext, AbortSignal | None], MaybeAwaitable[BeforeToolCallResult | None]
]
AfterToolCall = Callable[
    [AfterToolCallContext, AbortSignal | None], MaybeAwaitable[AfterToolCallResult | None]
]
MessagesHook = Callable[[], MaybeAwaitable[list[Message] | None]]
ArgumentsFailed = Callable[
    [ArgumentsFailedContext, AbortSignal | None], MaybeAwaitable[dict[str, Any] | None]
]
"""Returns arguments to run the pipeline again on (a person's edit), or None: the
error result stands."""
ErrorResultHook = Callable[
    [ErrorResultContext, AbortSignal | None], MaybeAwaitable[AfterToolCallResult | None]
]
"""Returns an override of the result (as `after_tool_call` does), or None."""


_LLM_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)
_LLM_TYPE_SET = frozenset(_LLM_TYPES)


def default_convert_to_llm(messages: list[Message]) -> list[Message]:
    """Keep the messages a model understands: user, assistant and tool results."""
    # Runs before every request over the whole transcript: when every message is
    # exactly one of the three types (the usual case), skip the per-message
    # isinstance (slow on pydantic models) and copy the list in C.
    if _LLM_TYPE_SET.issuperset(map(type, messages)):
        return list(messages)
    return [m for m in messages if isinstance(m, _LLM_TYPES)]


class RunLlmFilter:
    """`default_convert_to_llm` for the requests of one run, with the same results.

    Each request's transcript is usually the previous one plus a few messages, so
    only those are looked at; the rest is compared in C with the last transcript
    found to hold only the three types (by identity, else by equality, which for
    pydantic models includes the type; an app's own message that claims to equal
    one of them is taken at its word). Without this the check costs a Python step
    per message on every turn, and a long run grows with the square of its length.
    Lives as long as the run, so it keeps no transcript alive after it.
    """

    __slots__ = ("_all_llm",)

    def __init__(self) -> None:
        self._all_llm: list[Message] = []

    def __call__(self, messages: list[Message]) -> list[Message]:
        known = self._all_llm
        new: Iterable[Message] = messages
        if known and len(known) <= len(messages) and messages[: len(known)] == known:
            new = islice(messages, len(known), None)
        if _LLM_TYPE_SET.issuperset(map(type, new)):
            self._all_llm = list(messages)
            return list(messages)
        self._all_llm = []
        return [m for m in messages if isinstance(m, _LLM_TYPES)]


class ToolCallAborts:
    """The per-call abort controllers of a running loop, by tool call id.

    The loop registers each call's controller (linked to the run's signal) while
    the call is in flight; `abort(id)` ends that one call only.
    """

    def __init__(self) -> None:
        self._controllers: dict[str, AbortController] = {}

    def open(self, tool_call_id: str, parent: AbortSignal | None) -> AbortController:
        controller = AbortController(parent)
        self._controllers[tool_call_id] = controller
        return controller

    def close(self, tool_call_id: str, controller: AbortController | None = None) -> None:
        """The call is over: unlink its controller (by default the one registered for
        the id; pass the call's own when ids may repeat, so a later call with the same
        id keeps its registration)."""
        registered = self._controllers.get(tool_call_id)
        controller = controller or registered
        if controller is None:
            return
        if registered is controller:
            del self._controllers[tool_call_id]
        controller.unlink()

    def abort(self, tool_call_id: str, reason: Any = None) -> bool:
        """Abort one call. Returns False if no such call is in flight."""
        controller = self._controllers.get(tool_call_id)
        if controller is None:
            return False
        controller.abort(reason if reason is not None else "Tool call aborted by user")
        return True

    def __contains__(self, tool_call_id: object) -> bool:
        return tool_call_id in self._controllers


@dataclass
class AgentLoopConfig:
    model: Model
    convert_to_llm: Callable[[list[Message]], MaybeAwaitable[list[Message]]] = (
        default_convert_to_llm
    )
    transform_context: (
        Callable[[list[Message], AbortSignal | None], MaybeAwaitable[list[Message]]] | None
    ) = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    should_stop_after_turn: Callable[[TurnContext], MaybeAwaitable[bool]] | None = None
    prepare_next_turn: Callable[[TurnContext], MaybeAwaitable[NextTurn | None]] | None = None
    get_steering_messages: MessagesHook | None = None
    get_follow_up_messages: MessagesHook | None = None
    tool_abort_grace: float = 2.0
    """Seconds an aborted tool may take to stop on its own before it is cancelled (the
    same grace bounds a provider stream that does not end when the signal fires)."""
    tool_call_aborts: ToolCallAborts | None = None
    """Where per-call abort controllers are registered (the Agent passes its own)."""
    caps: ContentCaps = DEFAULT_CAPS
    """Workbench addition: caps on images in tool results and on each model reply's
    length (`workbench.agent.content_caps`)."""
    redact: Callable[[str], str] | None = None
    """Applied to every string of every tool result and update (e.g. a
    `workbench.redact.Redactor`); results are size-capped whether or not it is set."""
    on_arguments_failed: ArgumentsFailed | None = None
    """Workbench addition: asked when a call's arguments fail (the stepper's `@invalid`)."""
    on_error_result: ErrorResultHook | None = None
    """Workbench addition: asked with every error result before it is final (`@error`)."""
