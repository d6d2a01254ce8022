"""Calling one tool by hand: a person's call, run exactly like a model's.

`Agent.call_tool` builds a one-call assistant-like message whose provider and model
say "you" / "by hand" and whose call id is `hand_N`, then runs it through the same
`BatchRunner` as a model's calls: parse, lookup, prepare, validate,
`before_tool_call` (gate, stepper), execute with the abort signal and `on_update`,
`after_tool_call`, with every tool_* event on the bus.

How it is kept out of the transcript the model sees: the agent appends a message to
its transcript only on `message_end`, and a call by hand emits none. Its container
goes out as a `hand_call` event and its result as `hand_call_end` (the recorder,
the timeline and exports read those), so neither ever reaches `state.messages`,
the next model request, or the `message_end`s rerun, fork and resume rebuild a
transcript from.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from workbench.agent.abort import AbortSignal
from workbench.agent.config import AgentContext, AgentLoopConfig
from workbench.agent.emit import Emit
from workbench.agent.events import HandCallEndEvent, HandCallEvent
from workbench.agent.execution import BatchRunner
from workbench.agent.types import AssistantMessage, ToolCall, ToolResultMessage
from workbench.json_text import loads

HAND_PROVIDER = "you"
HAND_MODEL = "by hand"
HAND_PREFIX = "hand_"


def is_by_hand(message: Any) -> bool:
    """True for the container of a call a person made by hand."""
    return (
        getattr(message, "provider", None) == HAND_PROVIDER
        and getattr(message, "model", None) == HAND_MODEL
    )


def hand_message(call_id: str, name: str, arguments: str | dict[str, Any]) -> AssistantMessage:
    """The assistant-like message holding one call by hand. `arguments` as JSON text
    goes through the parse stage as a model's would (bad JSON is the call's error)."""
    if isinstance(arguments, str):
        raw = arguments
        try:
            value = loads(raw)
        except ValueError:  # JSONDecodeError, or nested too deep: the parse stage says so
            value = {}
        parsed = value if isinstance(value, dict) else {}
    else:
        raw, parsed = json.dumps(arguments, ensure_ascii=False), dict(arguments)
    call = ToolCall(id=call_id, name=name, arguments=parsed, raw_arguments=raw)
    return AssistantMessage(
        content=[call], stop_reason="toolUse", provider=HAND_PROVIDER, model=HAND_MODEL
    )


class _HandBatch(BatchRunner):
    """A batch whose result message goes to no one: no message events (the agent
    would put it in the transcript), only into `emitted`."""

    async def _emit_result_message(self, message: ToolResultMessage) -> None:
        self.emitted.append(message)


async def run_by_hand(
    message: AssistantMessage,
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None,
) -> ToolResultMessage:
    """Run the call of `message` (see `hand_message`); returns its result message,
    which is published in `hand_call_end` and nowhere else."""
    await emit(HandCallEvent(message=message))
    runner = _HandBatch(context, message, config, signal, emit)
    try:
        await runner.run(message.tool_calls)
    finally:
        with anyio.CancelScope(shield=True):
            if not runner.emitted:  # broken off (e.g. the task cancelled): still one result
                await runner.salvage("The call by hand broke off before it ended")
            await emit(HandCallEndEvent(message=runner.emitted[0]))
    return runner.emitted[0]
