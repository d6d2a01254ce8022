"""The agent loop: ask the model, run the tools it asked for, repeat.

A port of pi-agent-core's `agent-loop.ts`. The call chain reads top-down:
`run_agent_loop` -> `_run_loop` (while there are tool calls or queued messages) ->
`stream_assistant_response` -> `BatchRunner.run` (execution.py). Nothing escapes
the loop: provider failures end the turn with `stop_reason="error"`, tool and hook
failures become error results, and `agent_end` is always the last event.
`agent_loop` wraps a run in an `AgentEventStream` (event_stream.py); a provider that
ignores an abort is cut off by the `AbortGuard` (provider_stream.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup

from workbench.agent.abort import AbortSignal
from workbench.agent.config import (
    AgentContext,
    AgentLoopConfig,
    LlmContext,
    MessagesHook,
    RunLlmFilter,
    StreamFn,
    StreamOptions,
    TurnContext,
    default_convert_to_llm,
    resolve,
)
from workbench.agent.emit import Emit, as_async_emit
from workbench.agent.event_stream import AgentEventStream
from workbench.agent.events import (
    AgentEndEvent,
    AgentStartEvent,
    AssistantMessageEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from workbench.agent.execution import BatchRunner
from workbench.agent.provider_stream import UNGUARDED, AbortGuard, close_stream
from workbench.agent.types import AssistantMessage, Message, ToolResultMessage


async def run_agent_loop(
    prompts: Sequence[Message],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Callable[[Any], Any],
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[Message]:
    """Add `prompts` to the context and run until the agent stops.

    Returns every message the run added (the prompts included).
    """
    stream_fn = _require(stream_fn)
    sink = as_async_emit(emit)
    # Built first, so a prompt that is not a message fails before the run starts.
    prompt_events = [(MessageStartEvent(message=p), MessageEndEvent(message=p)) for p in prompts]
    new_messages: list[Message] = list(prompts)
    current = dataclasses.replace(context, messages=[*context.messages, *prompts])
    await sink(AgentStartEvent())
    await sink(TurnStartEvent())
    for start, end in prompt_events:
        await sink(start)
        await sink(end)
    await _guarded(current, new_messages, config, signal, sink, stream_fn)
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Callable[[Any], Any],
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[Message]:
    """Run from the current context without adding a message (retries, resumes)."""
    check_can_continue(context.messages)
    stream_fn = _require(stream_fn)
    sink = as_async_emit(emit)
    new_messages: list[Message] = []
    current = dataclasses.replace(context, messages=list(context.messages))
    await sink(AgentStartEvent())
    await sink(TurnStartEvent())
    await _guarded(current, new_messages, config, signal, sink, stream_fn)
    return new_messages


def check_can_continue(messages: Sequence[Message]) -> None:
    if not messages:
        raise ValueError("Cannot continue: no messages in context")
    if isinstance(messages[-1], AssistantMessage):
        raise ValueError("Cannot continue from message role: assistant")


def agent_loop(
    prompts: Sequence[Message],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    return AgentEventStream(
        lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn)
    )


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    check_can_continue(context.messages)
    return AgentEventStream(
        lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn)
    )


# -- the loop ------------------------------------------------------------------------


async def _guarded(
    context: AgentContext,
    new_messages: list[Message],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn,
) -> None:
    """Run the loop; a failing loop-level hook ends the run with an error message.

    If the loop broke off inside a tool batch, the batch is salvaged first: every
    call of that assistant message still gets exactly one result, in order.
    """
    state = _LoopState(context)
    try:
        async with anyio.create_task_group() as tg:  # one for the run, not one per batch
            state.tg = tg
            await _run_loop(state, new_messages, config, signal, emit, stream_fn)
    except Exception as raised:  # noqa: BLE001 - nothing escapes the loop
        exc = _root_cause(raised)
        reason = f"{type(exc).__name__}: {exc}"
        context = state.context
        runner = state.runner
        if runner is not None:
            results = await runner.salvage(
                f"Tool call was not executed: the agent loop failed ({reason})"
            )
            _append(context, new_messages, results)
            await emit(TurnEndEvent(message=runner.message, tool_results=results))
            state.turn_open = False
        if not state.turn_open:
            await emit(TurnStartEvent())
        failed = AssistantMessage(
            stop_reason="aborted" if signal is not None and signal.aborted else "error",
            error_message=f"Agent loop failed: {reason}",
            model=config.model.id,
            provider=config.model.provider,
        )
        context.messages.append(failed)
        new_messages.append(failed)
        await emit(MessageStartEvent(message=failed))
        await emit(MessageEndEvent(message=failed))
        await emit(TurnEndEvent(message=failed, tool_results=[]))
        await emit(AgentEndEvent(messages=new_messages))


class _LoopState:
    """Where the loop is, for `_guarded` to clean up after a failure."""

    __slots__ = ("context", "runner", "turn_open", "tg")

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tg: TaskGroup | None = None
        self.runner: BatchRunner | None = None
        """The tool batch in progress, if any."""
        self.turn_open = True
        """Whether a turn_start has been emitted without its turn_end."""


def _root_cause(exc: BaseException) -> BaseException:
    """The exception inside task-group wrappers (an ExceptionGroup of one)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def _run_loop(
    state: _LoopState,
    new_messages: list[Message],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn,
) -> None:
    context = state.context
    last_turn: TurnContext | None = None
    llm_filter = RunLlmFilter()
    pending = await _poll(config.get_steering_messages)
    while True:
        has_more_tool_calls = True
        while has_more_tool_calls or pending:
            if last_turn is not None:
                if config.prepare_next_turn is not None:
                    nxt = await resolve(config.prepare_next_turn(last_turn))
                    if nxt is not None:
                        context = state.context = nxt.context or context
                        config = dataclasses.replace(config, model=nxt.model or config.model)
                if not pending:
                    pending = await _poll(config.get_steering_messages)
                state.turn_open = True
                await emit(TurnStartEvent())

            for queued in pending:
                await emit(MessageStartEvent(message=queued))
                await emit(MessageEndEvent(message=queued))
                context.messages.append(queued)
                new_messages.append(queued)
            pending = []

            message = await stream_assistant_response(
                context, config, signal, emit, stream_fn, llm_filter
            )
            new_messages.append(message)
            tool_calls = message.tool_calls

            if message.stop_reason in ("error", "aborted"):
                runner = BatchRunner(context, message, config, signal, emit, state.tg)
                state.runner = runner
                results = await runner.answer_all(
                    _unrun_text(message), aborted=message.stop_reason == "aborted"
                )
                _append(context, new_messages, results.messages)
                state.runner = None
                state.turn_open = False
                await emit(TurnEndEvent(message=message, tool_results=results.messages))
                await emit(AgentEndEvent(messages=new_messages))
                return

            tool_results: list[ToolResultMessage] = []
            has_more_tool_calls = False
            if tool_calls:
                runner = BatchRunner(context, message, config, signal, emit, state.tg)
                state.runner = runner
                if message.stop_reason == "length":
                    text = (
                        "Tool call was not executed: the response hit the output token limit, "
                        "so its arguments may be truncated. Re-issue the tool call with "
                        "complete arguments."
                    )
                    batch = await runner.answer_all(text)
                else:
                    batch = await runner.run(tool_calls)
                tool_results = batch.messages
                has_more_tool_calls = not batch.terminate
                _append(context, new_messages, tool_results)
                state.runner = None

            state.turn_open = False
            await emit(TurnEndEvent(message=message, tool_results=tool_results))
            last_turn = TurnContext(message, tool_results, context, new_messages)
            if config.should_stop_after_turn is not None and await resolve(
                config.should_stop_after_turn(last_turn)
            ):
                await emit(AgentEndEvent(messages=new_messages))
                return
            pending = await _poll(config.get_steering_messages)

        follow_ups = await _poll(config.get_follow_up_messages)
        if follow_ups:
            pending = follow_ups
            continue
        break
    await emit(AgentEndEvent(messages=new_messages))


async def stream_assistant_response(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn,
    llm_filter: RunLlmFilter | None = None,
) -> AssistantMessage:
    """Ask the model once; the transcript is converted for the LLM only here
    (by `llm_filter`, the run's, when the conversion is the default one).

    A run whose abort signal has fired asks nothing more: its turn ends at once as
    aborted, without calling `stream_fn` (one that ignored the signal ran a whole new
    turn after a ctrl+c during the tools or in a dialog)."""
    if signal is not None and signal.aborted:
        unsent = AssistantMessage(
            model=config.model.id,
            provider=config.model.provider,
            stop_reason="aborted",
            error_message="Request was not sent: the run was aborted",
        )
        context.messages.append(unsent)
        await emit(MessageStartEvent(message=unsent))
        await emit(MessageEndEvent(message=unsent))
        return unsent
    messages: list[Message] = context.messages
    if config.transform_context is not None:
        messages = await resolve(config.transform_context(messages, signal))
    if config.convert_to_llm is default_convert_to_llm and llm_filter is not None:
        llm_messages = llm_filter(messages)  # the same list, a fresh one already
    else:
        # A list of the provider's own: the loop appends to the transcript while
        # the reply streams.
        llm_messages = list(await resolve(config.convert_to_llm(messages)))
    llm_context = LlmContext(context.system_prompt, llm_messages, context.tools)

    partial: AssistantMessage | None = None
    final: AssistantMessage | None = None
    stream: Any = None
    streamed = 0  # characters of text, thinking and arguments: capped per reply
    cap = config.caps.max_turn_output_chars
    # A provider should end with an "aborted" message when the signal fires; one that
    # does not is cut off after the abort grace (without a signal, nothing to guard).
    with anyio.CancelScope() if signal is not None else UNGUARDED as scope:
        guard = None
        if signal is not None and scope is not None:
            guard = AbortGuard(scope, signal, config.tool_abort_grace)
        try:
            stream = stream_fn(config.model, llm_context, StreamOptions(signal=signal))
            async for event in stream:
                if guard is not None:
                    guard.pause()
                kind = event.type
                if kind == "start":
                    partial = event.partial
                    context.messages.append(partial)
                    await emit(MessageStartEvent(message=partial))
                elif kind in ("done", "error"):
                    final = event.message
                    break
                elif partial is not None:
                    partial = event.partial or partial
                    if kind in _DELTA_FIELDS:
                        streamed += len(event.delta or "")
                        if streamed > cap:
                            final = _over_output_cap(partial, event, cap)
                            break
                    context.messages[-1] = partial
                    await emit(MessageUpdateEvent(message=partial, assistant_message_event=event))
                if guard is not None:
                    guard.resume()
        except Exception as exc:  # noqa: BLE001 - a provider that raises still ends the turn
            error = f"Provider error: {type(exc).__name__}: {exc}"
            final = _failed_from(partial, config, signal, error)
        finally:
            if guard is not None:
                guard.disarm()
            await close_stream(stream)
    if final is None:
        final = _failed_from(
            partial, config, signal, "Provider stream ended without a final message"
        )

    if partial is not None:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await emit(MessageStartEvent(message=final))
    await emit(MessageEndEvent(message=final))
    return final


# -- helpers -------------------------------------------------------------------------


def _unrun_text(message: AssistantMessage) -> str:
    why = "was aborted" if message.stop_reason == "aborted" else "ended with an error"
    return f"Tool call was not executed: the model's response {why}."


_DELTA_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "toolcall_delta": "raw_arguments",
}


def _over_output_cap(
    partial: AssistantMessage, event: AssistantMessageEvent, cap: int
) -> AssistantMessage:
    """The reply as it was before `event`, the delta that passed the cap (the stream
    is stopped there), ended with an error that names the cap."""
    content = list(partial.content)
    index = event.content_index
    if index is not None and 0 <= index < len(content):
        block = content[index]
        name = _DELTA_FIELDS[event.type]
        value = getattr(block, name, None)
        if isinstance(value, str) and value.endswith(event.delta or ""):
            kept = value[: len(value) - len(event.delta or "")]
            content[index] = block.model_copy(update={name: kept})
    return partial.model_copy(
        update={
            "content": content,
            "stop_reason": "error",
            "error_message": (
                f"The model's reply passed the cap of {cap:,} characters of text, thinking "
                "and tool-call arguments per turn (max_turn_output_chars): the stream was "
                "stopped there, and what came before is kept"
            ),
        }
    )


def _failed_from(
    partial: AssistantMessage | None,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    error: str,
) -> AssistantMessage:
    aborted = signal is not None and signal.aborted
    base = partial or AssistantMessage(model=config.model.id, provider=config.model.provider)
    return base.model_copy(
        update={
            "stop_reason": "aborted" if aborted else "error",
            "error_message": "Request was aborted" if aborted else error,
        }
    )


def _append(
    context: AgentContext, new_messages: list[Message], results: list[ToolResultMessage]
) -> None:
    context.messages.extend(results)
    new_messages.extend(results)


async def _poll(hook: MessagesHook | None) -> list[Message]:
    if hook is None:
        return []
    polled: list[Message] | None = await resolve(hook())
    return list(polled or [])


def _require(stream_fn: StreamFn | None) -> StreamFn:
    if stream_fn is None:
        raise TypeError("run_agent_loop needs a stream_fn (a provider)")
    return stream_fn
