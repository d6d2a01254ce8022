"""The loop's `stream_fn` for an ACP agent: its `session/update`s as model turns.

A turn of the loop is what the agent streams up to its next tool call(s): message
chunks become text, thought chunks thinking, each `tool_call` a tool-call block. A
block is closed once the call's input is known (the agent reported its raw input,
asked about it, ran it, or went on to something else), and the turn ends when
every call it opened is closed; the loop then runs the calls (`permission`). The
last turn of a prompt ends with the agent's `stopReason`.

The first turn of a run sends `session/prompt` with the run's new user messages;
an abort sends `session/cancel` and waits for the agent to end the prompt.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio

from workbench.acp.calls import AcpCall
from workbench.agent import AssistantMessageEvent, LlmContext, Model, StreamOptions
from workbench.agent.types import ImageContent, TextContent, ToolResultMessage, UserMessage
from workbench.providers.stream_builder import Events, StreamBuilder

if TYPE_CHECKING:
    from workbench.acp.run import AcpRun

STOP_REASONS = {
    "end_turn": "stop",
    "max_tokens": "length",
    "max_turn_requests": "stop",
    "refusal": "error",
    "cancelled": "aborted",
}


@dataclass
class FeedItem:
    """What the agent sent, in order, for the stream."""

    kind: Literal["text", "thought", "call", "settled", "end"]
    text: str = ""
    call: AcpCall | None = None
    stop_reason: str | None = None
    error: str | None = None


def prompt_blocks(messages: list[Any], images: bool) -> list[dict[str, Any]]:
    """The run's new user messages (those after the last reply) as ACP content blocks."""
    start = len(messages)
    while start and isinstance(messages[start - 1], UserMessage):
        start -= 1
    blocks: list[dict[str, Any]] = []
    for message in messages[start:]:
        content = message.content
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
            continue
        for part in content:
            if isinstance(part, TextContent):
                blocks.append({"type": "text", "text": part.text})
            elif isinstance(part, ImageContent) and images:
                blocks.append({"type": "image", "data": part.data, "mimeType": part.mime_type})
            elif isinstance(part, ImageContent):
                blocks.append(
                    {"type": "text", "text": f"[an image ({part.mime_type}) the agent cannot take]"}
                )
    return blocks


class AcpStream:
    """The `stream_fn` of an ACP run (one turn per call)."""

    def __init__(self, run: AcpRun) -> None:
        self.run = run

    def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        return self._turn(model, context, options)

    async def _turn(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        run = self.run
        builder = StreamBuilder(model)
        for event in builder.start():
            yield event
        messages = list(context.messages)
        if not messages or not isinstance(messages[-1], ToolResultMessage):
            error = await run.start_prompt(prompt_blocks(messages, run.takes_images))
            if error is not None:
                for event in builder.error(error):
                    yield event
                return
        open_calls: dict[str, int] = {}
        cancelled = False
        while True:
            signal = None if cancelled else options.signal
            item = await run.next_item(signal)
            if item is None:  # the abort: tell the agent, wait for it to end the prompt
                cancelled = True
                await run.cancel()
                continue
            events: Events = []
            if item.kind in ("text", "thought", "end"):
                events += self._settle_all(builder, open_calls)
            if item.kind == "text":
                events += builder.text(item.text)
            elif item.kind == "thought":
                events += builder.thinking(item.text)
            elif item.kind == "call" and item.call is not None:
                events += self._settle_all(builder, open_calls)
                index, opened = builder.begin_tool_call(item.call.id, item.call.name)
                open_calls[item.call.id] = index
                events += opened
            elif item.kind == "settled" and item.call is not None:
                events += self._settle(builder, open_calls, item.call)
            for event in events:
                yield event
            if item.kind == "call" and item.call is not None:
                await run.opened(item.call)  # its history may follow the loop's call now
            if item.kind == "end":
                for event in self._end(builder, item, cancelled):
                    yield event
                return
            if item.kind in ("call", "settled") and not open_calls and builder.message.tool_calls:
                for event in builder.done("toolUse"):
                    yield event
                return

    def _settle(self, builder: StreamBuilder, open_calls: dict[str, int], call: AcpCall) -> Events:
        index = open_calls.pop(call.id, None)
        if index is None:
            return []
        call.settled = True
        raw = call.raw_json
        if raw is None:  # not reported: no raw string (the stages show it as such)
            block = builder.message.content[index]
            block.raw_arguments = None  # type: ignore[union-attr]
            return builder.end_block(index)
        return builder.tool_call_delta(index, raw) + builder.end_block(index)

    def _settle_all(self, builder: StreamBuilder, open_calls: dict[str, int]) -> Events:
        events: Events = []
        for call_id in list(open_calls):
            events += self._settle(builder, open_calls, self.run.calls[call_id])
        return events

    @staticmethod
    def _end(builder: StreamBuilder, item: FeedItem, cancelled: bool) -> Events:
        if item.error is not None:
            return builder.error(f"The agent failed the prompt: {item.error}")
        reason = STOP_REASONS.get(item.stop_reason or "", "stop")
        if reason == "aborted" or cancelled:
            return builder.error("Cancelled: the agent ended the prompt (cancelled)", aborted=True)
        if reason == "error":
            return builder.error(f"The agent ended the prompt: {item.stop_reason}")
        return builder.done(reason)  # type: ignore[arg-type]


async def next_or_abort(receive: Any, signal: Any) -> FeedItem | None:
    """The next item of the feed, or None once `signal` aborts first."""
    if signal is None:
        return await receive()
    if signal.aborted:
        return None
    got: list[FeedItem] = []
    async with anyio.create_task_group() as tg:

        async def take() -> None:
            got.append(await receive())
            tg.cancel_scope.cancel()

        tg.start_soon(take)
        await signal.wait()
        tg.cancel_scope.cancel()
    return got[0] if got else None
