"""The stateful Agent: a transcript, an event bus, and one run at a time.

Wraps the loop the way pi's `Agent` does: it owns the messages, queues steering
and follow-up messages, keeps an abort controller per run, and fans every event
out to its subscribers (awaited in order). Gate, stepper and provider telemetry
publish onto the same bus through `publish`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from workbench.agent.abort import AbortController, AbortSignal
from workbench.agent.by_hand import HAND_PREFIX, hand_message, run_by_hand
from workbench.agent.config import (
    AfterToolCall,
    AgentContext,
    AgentLoopConfig,
    ArgumentsFailed,
    BeforeToolCall,
    ErrorResultHook,
    MessagesHook,
    NextTurn,
    StreamFn,
    ToolCallAborts,
    TurnContext,
    default_convert_to_llm,
    resolve,
)
from workbench.agent.content_caps import DEFAULT_CAPS, ContentCaps
from workbench.agent.loop import check_can_continue, run_agent_loop, run_agent_loop_continue
from workbench.agent.tool import AgentTool
from workbench.agent.types import (
    AssistantMessage,
    Message,
    Model,
    ToolResultMessage,
    UserMessage,
)

log = logging.getLogger("workbench.agent")

Listener = Callable[[Any, AbortSignal | None], Any]
QueueMode = Literal["one-at-a-time", "all"]


class EventBus:
    """Ordered, awaited fan-out of events. A failing listener is logged, never fatal."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self.listener_errors: list[BaseException] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def publish(self, event: Any, signal: AbortSignal | None = None) -> None:
        for listener in tuple(self._listeners):
            try:
                result = listener(event, signal)
                if result is not None and inspect.isawaitable(result):
                    await result
            except Exception as exc:  # noqa: BLE001 - a broken view must not break the run
                self.listener_errors.append(exc)
                log.exception("event listener failed on %s", getattr(event, "type", event))


@dataclass
class AgentState:
    system_prompt: str
    model: Model
    tools: list[AgentTool]
    messages: list[Message] = field(default_factory=list)
    is_streaming: bool = False
    """True while a run is in progress (model streaming or tools running)."""
    streaming_message: AssistantMessage | None = None
    pending_tool_calls: set[str] = field(default_factory=set)
    error_message: str | None = None


class Agent:
    """Owns a transcript and runs the loop on it, one run at a time."""

    def __init__(
        self,
        *,
        stream_fn: StreamFn,
        model: Model,
        system_prompt: str = "",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[Message] = (),
        convert_to_llm: Callable[[list[Message]], Any] = default_convert_to_llm,
        transform_context: Callable[[list[Message], AbortSignal | None], Any] | None = None,
        tool_execution: Literal["parallel", "sequential"] = "parallel",
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        should_stop_after_turn: Callable[[TurnContext], Any] | None = None,
        prepare_next_turn: Callable[[TurnContext], NextTurn | None | Any] | None = None,
        get_steering_messages: MessagesHook | None = None,
        get_follow_up_messages: MessagesHook | None = None,
        tool_abort_grace: float = 2.0,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
    ) -> None:
        self.stream_fn = stream_fn
        self.state = AgentState(system_prompt, model, list(tools), list(messages))
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.tool_execution = tool_execution
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.on_arguments_failed: ArgumentsFailed | None = None
        """Workbench addition (see `AgentLoopConfig`): the stepper sets it."""
        self.on_error_result: ErrorResultHook | None = None
        """Workbench addition (see `AgentLoopConfig`): the stepper sets it."""
        self.should_stop_after_turn = should_stop_after_turn
        self.prepare_next_turn = prepare_next_turn
        self.get_steering_messages = get_steering_messages
        self.get_follow_up_messages = get_follow_up_messages
        self.tool_abort_grace = tool_abort_grace
        self.redact: Callable[[str], str] | None = None
        """Applied to every tool result and update (see `AgentLoopConfig.redact`)."""
        self.caps: ContentCaps = DEFAULT_CAPS
        """Caps on images in results and on each model reply (`AgentLoopConfig.caps`)."""
        self.steering_mode: QueueMode = steering_mode
        self.follow_up_mode: QueueMode = follow_up_mode
        self.bus = EventBus()
        self._steering: list[Message] = []
        self._follow_ups: list[Message] = []
        self._controller: AbortController | None = None
        self._idle: anyio.Event | None = None
        self._call_aborts = ToolCallAborts()
        self._skip_steering_poll = False
        self._hand_calls = 0

    # -- the event bus -----------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event, signal)` for every event; returns an unsubscribe function."""
        return self.bus.subscribe(listener)

    async def publish(self, event: Any) -> None:
        """Put an event on the bus (gate, stepper and providers use this)."""
        await self.bus.publish(event, self.signal)

    @property
    def signal(self) -> AbortSignal | None:
        """The current run's abort signal (None when idle)."""
        return None if self._controller is None else self._controller.signal

    # -- runs --------------------------------------------------------------------

    async def prompt(self, message: str | Message | Sequence[Message]) -> list[Message]:
        """Send a prompt and run until the agent stops. Returns the messages added."""
        self._refuse_if_running("prompt")
        if isinstance(message, str):
            prompts: list[Message] = [UserMessage(content=message)]
        elif isinstance(message, (UserMessage, AssistantMessage, ToolResultMessage)):
            prompts = [message]
        else:
            prompts = list(message)
        return await self._run(prompts)

    async def continue_(self) -> list[Message]:
        """Resume from the transcript as it is (after an error, an abort or a tool result)."""
        self._refuse_if_running("continue_")
        messages = self.state.messages
        if messages and isinstance(messages[-1], AssistantMessage):
            steering = self._take(self._steering, self.steering_mode)
            if steering:
                # The run's first steering poll would take the next queued message at
                # once; skip it so one-at-a-time still means one message per turn.
                self._skip_steering_poll = True
                return await self._run(steering)
            follow_ups = self._take(self._follow_ups, self.follow_up_mode)
            if follow_ups:
                return await self._run(follow_ups)
        check_can_continue(messages)
        return await self._run(None)

    async def call_tool(self, name: str, arguments: str | dict[str, Any]) -> ToolResultMessage:
        """Run one call of tool `name` by hand (`arguments`: a dict, or JSON text that
        goes through the parse stage) while the agent is idle.

        The call (id `hand_N`, in a message whose provider/model are "you"/"by hand")
        takes the same pipeline, hooks, abort signal and events as a model's call, but
        it never enters the transcript: the model did not ask for it (see
        `workbench.agent.by_hand`). Returns its result message.

        Raises:
            RuntimeError: a run (or another call by hand) is going.
        """
        self._refuse_if_running("call_tool")
        # A model may have named one of its calls `hand_N` too: ids must stay unique.
        taken = {
            c.id
            for m in self.state.messages
            if isinstance(m, AssistantMessage)
            for c in m.tool_calls
        }
        self._hand_calls += 1
        while f"{HAND_PREFIX}{self._hand_calls}" in taken:
            self._hand_calls += 1
        message = hand_message(f"{HAND_PREFIX}{self._hand_calls}", name, arguments)
        self._controller = AbortController()
        self._idle = anyio.Event()
        self.state.is_streaming = True
        self.state.error_message = None
        context = AgentContext(
            self.state.system_prompt, list(self.state.messages), self.state.tools
        )
        try:
            return await run_by_hand(
                message, context, self._config(), self._on_event, self._controller.signal
            )
        finally:
            self.state.is_streaming = False
            self.state.pending_tool_calls = set()
            self._controller = None
            self._idle.set()

    def abort(self, reason: Any = None) -> None:
        """Fire the current run's abort signal (no-op when idle)."""
        if self._controller is not None:
            self._controller.abort(reason)

    def abort_tool_call(self, tool_call_id: str, reason: Any = None) -> bool:
        """Abort one in-flight tool call; the rest of its batch goes on."""
        return self._call_aborts.abort(tool_call_id, reason)

    async def wait_for_idle(self) -> None:
        if self._idle is not None:
            await self._idle.wait()

    def steer(self, message: str | Message) -> None:
        """Queue a message to inject after the current tool batch."""
        self._steering.append(_as_message(message))

    def follow_up(self, message: str | Message) -> None:
        """Queue a message to send when the agent would otherwise stop."""
        self._follow_ups.append(_as_message(message))

    @property
    def queued(self) -> tuple[list[Message], list[Message]]:
        """(steering, follow-up) messages waiting to be delivered."""
        return list(self._steering), list(self._follow_ups)

    def clear_queues(self) -> None:
        self._steering.clear()
        self._follow_ups.clear()

    def reset(self) -> None:
        """Forget the transcript, the queues and any error.

        Raises:
            RuntimeError: a run is going (abort it and `await wait_for_idle()` first).
        """
        if self._controller is not None:
            raise RuntimeError(
                "Cannot reset the agent while a run is going: call abort(), "
                "await wait_for_idle(), then reset()."
            )
        self.state.messages = []
        self.state.is_streaming = False
        self.state.streaming_message = None
        self.state.pending_tool_calls = set()
        self.state.error_message = None
        self.clear_queues()

    # -- internals ---------------------------------------------------------------

    def _refuse_if_running(self, what: str) -> None:
        if self._controller is not None:
            raise RuntimeError(
                f"Agent is already running; {what}() must wait. Use steer() or follow_up() "
                "to queue a message, abort() to stop, or await wait_for_idle()."
            )

    def _config(self) -> AgentLoopConfig:
        return AgentLoopConfig(
            model=self.state.model,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            should_stop_after_turn=self.should_stop_after_turn,
            prepare_next_turn=self.prepare_next_turn,
            get_steering_messages=self._steering_hook,
            get_follow_up_messages=self._follow_up_hook,
            tool_abort_grace=self.tool_abort_grace,
            tool_call_aborts=self._call_aborts,
            redact=self.redact,
            caps=self.caps,
            on_arguments_failed=self.on_arguments_failed,
            on_error_result=self.on_error_result,
        )

    async def _steering_hook(self) -> list[Message]:
        if self._skip_steering_poll:
            self._skip_steering_poll = False
            return []
        extra = await resolve(self.get_steering_messages()) if self.get_steering_messages else None
        return self._take(self._steering, self.steering_mode) + list(extra or [])

    async def _follow_up_hook(self) -> list[Message]:
        extra = (
            await resolve(self.get_follow_up_messages()) if self.get_follow_up_messages else None
        )
        return self._take(self._follow_ups, self.follow_up_mode) + list(extra or [])

    @staticmethod
    def _take(queue: list[Message], mode: QueueMode) -> list[Message]:
        if not queue:
            return []
        taken = queue[:1] if mode == "one-at-a-time" else queue[:]
        del queue[: len(taken)]
        return taken

    async def _run(self, prompts: list[Message] | None) -> list[Message]:
        self._controller = AbortController()
        self._idle = anyio.Event()
        self.state.is_streaming = True
        self.state.streaming_message = None
        self.state.error_message = None
        signal = self._controller.signal
        context = AgentContext(
            self.state.system_prompt, list(self.state.messages), self.state.tools
        )
        try:
            if prompts is None:
                return await run_agent_loop_continue(
                    context, self._config(), self._on_event, signal, self.stream_fn
                )
            return await run_agent_loop(
                prompts, context, self._config(), self._on_event, signal, self.stream_fn
            )
        finally:
            self._skip_steering_poll = False
            self.state.is_streaming = False
            self.state.streaming_message = None
            self.state.pending_tool_calls = set()
            self._controller = None
            self._idle.set()

    async def _on_event(self, event: Any) -> None:
        # Dispatch on the event's `type` (isinstance on pydantic classes is slow, and
        # this runs for every event of every run).
        state = self.state
        kind = event.type
        if kind == "message_update":
            state.streaming_message = event.message
        elif kind == "message_start":
            if event.message.role == "assistant":
                state.streaming_message = event.message
        elif kind == "message_end":
            state.streaming_message = None
            state.messages.append(event.message)
        elif kind == "tool_execution_start":
            state.pending_tool_calls.add(event.tool_call_id)
        elif kind == "tool_execution_end":
            state.pending_tool_calls.discard(event.tool_call_id)
        elif kind == "turn_end":
            if event.message.role == "assistant" and event.message.error_message:
                state.error_message = event.message.error_message
        await self.bus.publish(event, self.signal)


def _as_message(message: str | Message) -> Message:
    return UserMessage(content=message) if isinstance(message, str) else message
