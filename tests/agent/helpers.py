"""Shared fakes for the runtime tests: a scripted stream function, an event recorder,
tool factories and transcript / event-stream checks."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel

from workbench.agent import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Message,
    Model,
    StreamOptions,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    run_agent_loop,
)

MODEL = Model(id="mock", provider="test")


# -- messages ------------------------------------------------------------------------


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def call(
    call_id: str, name: str = "echo", args: dict[str, Any] | None = None, *, raw: str | None = None
) -> ToolCall:
    """A tool call. With `raw`, the arguments are what a lenient provider would parse."""
    if raw is not None and args is None:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = {}
        args = parsed if isinstance(parsed, dict) else {}
    return ToolCall(id=call_id, name=name, arguments=args or {}, raw_arguments=raw)


def assistant(
    *content: str | ToolCall, stop_reason: str | None = None, error: str | None = None
) -> AssistantMessage:
    blocks = [TextContent(text=c) if isinstance(c, str) else c for c in content]
    if stop_reason is None:
        stop_reason = "toolUse" if any(isinstance(b, ToolCall) for b in blocks) else "stop"
    return AssistantMessage(
        content=blocks,
        stop_reason=stop_reason,  # type: ignore[arg-type]
        error_message=error,
        model=MODEL.id,
        provider=MODEL.provider,
    )


def calls_reply(*calls: ToolCall) -> AssistantMessage:
    return assistant(*calls)


def text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(getattr(c, "text", "") for c in content)


# -- the fake provider ---------------------------------------------------------------

Reply = AssistantMessage | BaseException | Callable[[LlmContext, int], Any]


@dataclass
class Request:
    model: Model
    context: LlmContext
    signal: AbortSignal | None


class FakeStream:
    """A stream function that replays canned replies, one per request, and records
    every request (model, a snapshot of the LLM context, the signal).

    A reply is an AssistantMessage, an exception to raise from the stream, or a
    callable `(llm_context, index) -> reply` (sync or async). Past the end of the
    list, `default` (a plain "done" text reply) is played. Each reply streams as
    `start`, a text delta per text block, then `done` (or `error` for a message whose
    stop reason is "error"/"aborted"). A request made with an aborted signal is
    answered at once with an aborted message, as real providers do.
    """

    def __init__(self, *replies: Reply, default: AssistantMessage | None = None) -> None:
        self.replies = list(replies)
        self.default = default or assistant("done")
        self.requests: list[Request] = []

    @property
    def count(self) -> int:
        return len(self.requests)

    def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        index = len(self.requests)
        snapshot = LlmContext(context.system_prompt, list(context.messages), list(context.tools))
        self.requests.append(Request(model, snapshot, options.signal))
        return self._play(index, model, context, options.signal)

    async def _play(
        self, index: int, model: Model, context: LlmContext, signal: AbortSignal | None
    ) -> AsyncIterator[AssistantMessageEvent]:
        if signal is not None and signal.aborted:  # as real providers do
            aborted = AssistantMessage(
                model=model.id,
                provider=model.provider,
                stop_reason="aborted",
                error_message="Request was aborted",
            )
            yield AssistantMessageEvent(
                type="start", partial=AssistantMessage(model=model.id, provider=model.provider)
            )
            yield AssistantMessageEvent(type="error", message=aborted)
            return
        reply: Any = self.replies[index] if index < len(self.replies) else self.default
        if callable(reply) and not isinstance(reply, (BaseException, AssistantMessage)):
            reply = reply(context, index)
            if inspect.isawaitable(reply):
                reply = await reply
        if isinstance(reply, BaseException):
            raise reply
        final = reply.model_copy(deep=True)
        partial = AssistantMessage(model=model.id, provider=model.provider)
        yield AssistantMessageEvent(type="start", partial=partial)
        for i, block in enumerate(final.content):
            if isinstance(block, TextContent):
                partial = partial.model_copy(update={"content": [*partial.content, block]})
                yield AssistantMessageEvent(
                    type="text_delta", partial=partial, content_index=i, delta=block.text
                )
        kind = "error" if final.stop_reason in ("error", "aborted") else "done"
        yield AssistantMessageEvent(type=kind, message=final)


# -- events --------------------------------------------------------------------------


class Recorder:
    """An event sink (`await rec(event)`) and Agent listener (`rec.listener`)."""

    def __init__(self, on_event: Callable[[Any], Any] | None = None) -> None:
        self.events: list[Any] = []
        self.signals: list[AbortSignal | None] = []
        self.on_event = on_event

    async def __call__(self, event: Any) -> None:
        self.events.append(event)
        if self.on_event is not None:
            result = self.on_event(event)
            if inspect.isawaitable(result):
                await result

    async def listener(self, event: Any, signal: AbortSignal | None) -> None:
        self.signals.append(signal)
        await self(event)

    def types(
        self, *, skip: Sequence[str] = ("message_update", "tool_execution_phase")
    ) -> list[str]:
        return [e.type for e in self.events if e.type not in skip]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def ids(self, kind: str) -> list[str]:
        return [e.tool_call_id for e in self.of(kind)]

    def result_message_ids(self) -> list[str]:
        return [
            e.message.tool_call_id
            for e in self.of("message_end")
            if isinstance(e.message, ToolResultMessage)
        ]


# -- tools ---------------------------------------------------------------------------


class Value(BaseModel):
    value: str


class NoArgs(BaseModel):
    pass


Execute = Callable[[str, Any, AbortSignal, Callable[[AgentToolResult], None]], Awaitable[Any]]


def make_tool(
    name: str = "echo",
    execute: Execute | None = None,
    *,
    params: type[BaseModel] = Value,
    mode: str | None = None,
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    log: list[Any] | None = None,
) -> AgentTool:
    """A tool; by default it echoes `value` and appends it to `log`."""

    async def echo(
        tool_call_id: str, p: Any, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        value = getattr(p, "value", None)
        if log is not None:
            log.append(value)
        return AgentToolResult.text(f"echoed: {value}", details={"value": value})

    return AgentTool(
        name=name,
        label=name.title(),
        description=f"The {name} tool",
        parameters=params,
        execute=execute or echo,
        prepare_arguments=prepare,
        execution_mode=mode,  # type: ignore[arg-type]
    )


class Gate:
    """An anyio.Event with a shorter name, for tools that wait to be released."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    def open(self) -> None:
        self.event.set()

    async def wait(self) -> None:
        await self.event.wait()


# -- running the loop ----------------------------------------------------------------


@dataclass
class Run:
    messages: list[Message]
    rec: Recorder
    stream: FakeStream
    context: AgentContext
    extra: dict[str, Any] = field(default_factory=dict)


async def run_loop(
    stream: FakeStream,
    tools: Sequence[AgentTool] = (),
    *,
    prompt: str | Sequence[Message] = "go",
    history: Sequence[Message] = (),
    signal: AbortSignal | None = None,
    rec: Recorder | None = None,
    timeout: float = 5.0,
    **config: Any,
) -> Run:
    """Run `run_agent_loop` once with a fresh context; fail if it takes over `timeout`."""
    prompts = [user(prompt)] if isinstance(prompt, str) else list(prompt)
    context = AgentContext(system_prompt="sys", messages=list(history), tools=list(tools))
    rec = rec or Recorder()
    cfg = AgentLoopConfig(model=config.pop("model", MODEL), **config)
    with anyio.fail_after(timeout):
        messages = await run_agent_loop(prompts, context, cfg, rec, signal=signal, stream_fn=stream)
    return Run(messages, rec, stream, context)


# -- invariants ----------------------------------------------------------------------


def assert_transcript_valid(messages: Sequence[Any]) -> None:
    """Every assistant tool call is answered by exactly one result with its id, in
    order, right after its message; no result answers anything else."""
    i = 0
    n = len(messages)
    while i < n:
        m = messages[i]
        if isinstance(m, ToolResultMessage):
            raise AssertionError(f"orphan tool result {m.tool_call_id} at {i}")
        i += 1
        if isinstance(m, AssistantMessage):
            expected = [c.id for c in m.tool_calls]
            got = [
                r.tool_call_id
                for r in messages[i : i + len(expected)]
                if isinstance(r, ToolResultMessage)
            ]
            assert got == expected, f"results {got} do not answer {expected} (message {i - 1})"
            i += len(expected)


def assert_events_valid(events: Sequence[Any]) -> None:
    """agent_start first, agent_end last and once; per call: start, one tool_arguments,
    end, nothing after its end; turns balanced."""
    types = [e.type for e in events]
    assert types and types[0] == "agent_start", types[:3]
    assert types[-1] == "agent_end", types[-3:]
    assert types.count("agent_end") == 1 and types.count("agent_start") == 1
    assert types.count("turn_start") == types.count("turn_end")
    state: dict[str, str] = {}
    args_seen: dict[str, int] = {}
    for e in events:
        if e.type == "tool_execution_start":
            assert e.tool_call_id not in state, f"second start for {e.tool_call_id}"
            state[e.tool_call_id] = "started"
            args_seen[e.tool_call_id] = 0
        elif e.type == "tool_arguments":
            assert state.get(e.tool_call_id) == "started", (
                f"tool_arguments outside {e.tool_call_id}"
            )
            args_seen[e.tool_call_id] += 1
        elif e.type in ("tool_execution_update", "tool_execution_phase"):
            assert state.get(e.tool_call_id) == "started", f"{e.type} outside {e.tool_call_id}"
        elif e.type == "tool_execution_end":
            assert state.get(e.tool_call_id) == "started", f"end without start {e.tool_call_id}"
            state[e.tool_call_id] = "ended"
    assert all(s == "ended" for s in state.values()), state
    assert all(n == 1 for n in args_seen.values()), args_seen
