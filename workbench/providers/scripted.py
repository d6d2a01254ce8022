"""The scripted model: plays a scenario file of assistant turns, offline.

A scenario (JSON) lists the turns the "model" takes. Each turn may think, talk,
ask for tool calls (with exact raw argument strings, malformed ones too), stop for
any reason, or fail like a provider. A turn can branch on the tool results it is
answering, so a denied (or aborted) call gets a different reply than an allowed one.
Text and argument strings stream in chunks at a configurable pace (instant for tests,
human-readable for the demo), through the same events a real provider emits.

Given a `publish` function, it also publishes the wire events the OpenAI provider
does, marked `simulated`: the request body an OpenAI-compatible server would be sent
for this context (built by the same code), and the reply's timings and usage. So
the network view shows the demo's requests, though nothing goes over a network.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from workbench.agent.abort import AbortSignal
from workbench.agent.config import LlmContext, StreamOptions, resolve
from workbench.agent.events import AssistantMessageEvent, Event
from workbench.agent.types import (
    AssistantMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    Usage,
    text_of,
)
from workbench.bus_events import ProviderRequestEvent, ProviderResponseEvent
from workbench.providers.request_bodies import RequestBodies
from workbench.providers.stream_builder import StreamBuilder

FINISH_REASONS = {"toolUse": "tool_calls", "stop": "stop", "length": "length"}
"""What an OpenAI-compatible server would say for each stop reason."""


class ScriptedToolCall(BaseModel):
    name: str
    arguments: dict[str, Any] | None = None
    raw: str | None = None
    """The exact argument string to send (may be malformed); overrides `arguments`."""
    id: str | None = None

    def raw_string(self) -> str:
        if self.raw is not None:
            return self.raw
        return json.dumps(self.arguments or {}, ensure_ascii=False)


class ResultMatch(BaseModel):
    """Matches when any of the tool results being answered fits every field given."""

    model_config = ConfigDict(extra="forbid")  # a misspelt field must not match everything

    tool: str | None = None
    is_error: bool | None = None
    contains: str | None = None
    """A substring of the result's text."""
    lacks: str | None = None
    """A substring the result's text does not hold (a file read back after a person
    edited the call that wrote it, say)."""
    aborted: bool | None = None
    """The call was aborted (ctrl+c, F8, or the run's abort while it waited or ran)."""
    no_results: bool = False
    """Match only a reply that answers no tool results (the last reply asked for none)."""

    def matches(self, results: list[ToolResultMessage]) -> bool:
        if self.no_results:
            return not results
        return any(
            (self.tool is None or r.tool_name == self.tool)
            and (self.is_error is None or r.is_error == self.is_error)
            and (self.contains is None or self.contains in r.text)
            and (self.lacks is None or self.lacks not in r.text)
            and (self.aborted is None or is_aborted(r) == self.aborted)
            for r in results
        )


def is_aborted(result: ToolResultMessage) -> bool:
    """Whether a call was aborted: the loop marks such results `details.aborted`; a call
    aborted while it waited for permission is denied with "Operation aborted ..."."""
    details = result.details
    if isinstance(details, dict) and details.get("aborted") is True:
        return True
    return result.is_error and result.text.startswith("Operation aborted")


class ScriptedTurn(BaseModel):
    thinking: str | None = None
    text: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    """Defaults to "toolUse" when there are tool calls, else "stop"."""
    error: str | None = None
    """Fail like a provider after streaming the content above."""
    usage: Usage | None = None
    delay: float = 0.0
    """Seconds before the first token (scaled by the pace)."""
    branches: list[Branch] = Field(default_factory=list)
    """Alternatives picked by the results of the previous turn's tool calls."""


class Branch(BaseModel):
    when: ResultMatch
    turn: ScriptedTurn


ScriptedTurn.model_rebuild()


class Scenario(BaseModel):
    name: str
    description: str = ""
    prompt: str = ""
    """The user's first message when none is given."""
    system_prompt: str = ""
    model: str = "scripted"
    workspace_files: dict[str, str] = Field(default_factory=dict)
    """Files (relative path -> text) to seed a scratch workspace with."""
    turns: list[ScriptedTurn]

    @classmethod
    def load(cls, source: str | Path) -> Scenario:
        """Load a scenario by built-in name ("demo") or from a JSON file path."""
        path = Path(source)
        if path.suffix != ".json" and not path.exists():
            text = resources.files("workbench.scenarios").joinpath(f"{source}.json").read_text()
        else:
            text = path.read_text(encoding="utf-8")
        return cls.model_validate_json(text)


YIELD_EVERY = 0.001
"""At full speed, the longest the stream runs without letting other tasks of the event
loop in (a key pressed in the app waits for the stream otherwise)."""


class ScriptedProvider:
    """A stream function that plays a `Scenario`.

    Args:
        scenario: the turns to play.
        chars_per_second: streaming pace; `math.inf` (the default) is instant.
        chunk_size: characters per text or argument delta.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        chars_per_second: float = math.inf,
        chunk_size: int = 6,
        publish: Callable[[Event], Awaitable[None]] | None = None,
    ) -> None:
        self.scenario = scenario
        self.chars_per_second = chars_per_second
        self.chunk_size = max(1, chunk_size)
        self.publish = publish
        """Awaited with the simulated wire events (None: none are made)."""
        self._tally: _Tally | None = None
        self.bodies = RequestBodies()
        """The simulated requests' bodies, each built from the previous one's."""

    @property
    def model(self) -> Model:
        return Model(id=self.scenario.model, provider="scripted")

    def pick_turn(self, context: LlmContext) -> ScriptedTurn:
        """The turn to play: one per assistant reply so far (aborted ones are retried)."""
        played = self._count(context.messages).played
        if played >= len(self.scenario.turns):
            return ScriptedTurn(text="(The scripted scenario has no more turns.)")
        turn = self.scenario.turns[played]
        results = _last_tool_results(context)
        for branch in turn.branches:
            if branch.when.matches(results):
                return branch.turn
        return turn

    async def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        signal = options.signal
        turn = self.pick_turn(context)
        b = StreamBuilder(model)
        wire = _SimulatedWire(self.publish, model, context, self.bodies) if self.publish else None
        if wire is not None:
            await wire.request()
        for event in b.start():
            yield event
        if await self._pause(turn.delay, signal):
            if wire is not None:
                await wire.response(b, aborted=True)
            for event in b.error("Request was aborted", aborted=True):
                yield event
            return
        pieces: list[tuple[str, Any]] = []
        if turn.thinking:
            pieces += [("thinking", c) for c in self._chunks(turn.thinking)]
        if turn.text:
            pieces += [("text", c) for c in self._chunks(turn.text)]
        call_number = self._count(context.messages).replies
        for i, call in enumerate(turn.tool_calls):
            call_id = call.id or f"call_{call_number + 1}_{i + 1}"
            pieces.append(("call", (call_id, call.name)))
            pieces += [("args", c) for c in self._chunks(call.raw_string())]
        index = -1
        paced = math.isfinite(self.chars_per_second)
        yielded = time.perf_counter()
        for kind, value in pieces:
            if kind == "call":
                index, events = b.begin_tool_call(*value)
            elif kind == "args":
                events = b.tool_call_delta(index, value)
            elif kind == "text":
                events = b.text(value)
            else:
                events = b.thinking(value)
            if wire is not None:
                wire.first_token()
            for event in events:
                yield event
            if paced:
                size = len(value) if isinstance(value, str) else 0
                stop = await self._pause(size, signal, chars=True)
            else:  # full speed: look at the signal, and let the rest of the loop in
                stop = signal is not None and signal.aborted
                now = time.perf_counter()
                if now - yielded >= YIELD_EVERY:
                    await anyio.sleep(0)
                    yielded = time.perf_counter()
            if stop:
                if wire is not None:
                    await wire.response(b, aborted=True)
                for event in b.error("Request was aborted", aborted=True):
                    yield event
                return
        events = b.close_all()  # first, so the tool calls' argument strings are counted
        usage = turn.usage or self._estimate_usage(context, b.message)
        if turn.error:
            events += b.error(turn.error, usage=usage)
        else:
            events += b.done(turn.stop_reason, usage)
        if wire is not None:
            await wire.response(b)
        for event in events:
            yield event

    def _count(self, messages: Sequence[Any]) -> _Tally:
        """Totals over `messages`, extending the last count when they only grew since.

        Each request's context is the previous one plus a few messages, so counting
        only the new ones keeps a long run linear instead of quadratic. The earlier
        messages are checked by identity, so any other context is counted afresh.
        """
        tally = self._tally
        if tally is not None and tally.source is messages and len(tally.messages) == len(messages):
            return tally  # the same request asking again
        if (
            tally is not None
            and len(tally.messages) <= len(messages)
            and tally.messages == messages[: len(tally.messages)]  # by identity, or equal
        ):
            played, replies, chars = tally.played, tally.replies, tally.chars
            new: Iterator[Any] = islice(messages, len(tally.messages), None)
        else:
            played = replies = chars = 0
            new = iter(messages)
        for m in new:
            if isinstance(m, AssistantMessage):
                replies += 1
                played += m.stop_reason != "aborted"
                chars += len(m.text)
            else:
                chars += len(text_of(m.content))
        self._tally = tally = _Tally(messages, list(messages), played, replies, chars)
        return tally

    def _estimate_usage(self, context: LlmContext, reply: AssistantMessage) -> Usage:
        """A rough token count (4 characters a token) so the demo shows plausible figures."""
        prompt_chars = len(context.system_prompt) + self._count(context.messages).chars
        reply_chars = 0
        for c in reply.content:  # by type: a failed getattr on a pydantic model is slow
            if isinstance(c, TextContent):
                reply_chars += len(c.text)
            elif isinstance(c, ThinkingContent):
                reply_chars += len(c.thinking)
            else:
                reply_chars += len(c.raw_arguments or "")
        prompt, output = prompt_chars // 4 + 1, reply_chars // 4 + 1
        return Usage(input=prompt, output=output, total_tokens=prompt + output)

    def _chunks(self, text: str) -> list[str]:
        n = self.chunk_size
        return [text[i : i + n] for i in range(0, len(text), n)] or [""]

    async def _pause(self, amount: float, signal: AbortSignal | None, chars: bool = False) -> bool:
        """Sleep for the pace; True if the signal fired (before or during the pause)."""
        if signal is not None and signal.aborted:
            return True
        seconds = amount / self.chars_per_second if chars else amount
        if not math.isfinite(self.chars_per_second):
            seconds = 0.0
        if seconds <= 0:
            return False
        if signal is None:
            await anyio.sleep(seconds)
            return False
        with anyio.move_on_after(seconds):
            await signal.wait()
        return signal.aborted


class _SimulatedWire:
    """The wire events a real request for this turn would have made, marked simulated."""

    def __init__(
        self,
        publish: Callable[[Event], Awaitable[None]],
        model: Model,
        context: LlmContext,
        bodies: RequestBodies,
    ) -> None:
        self.publish = publish
        self.bodies = bodies
        self.model = model
        self.context = context
        self.request_id = f"sim_{uuid.uuid4().hex[:16]}"
        self.started = time.monotonic()
        self.ttft_ms: float | None = None

    async def request(self) -> None:
        from workbench.providers.settings import OpenAISettings

        body, repairs = self.bodies.build(
            self.model.id, self.context, OpenAISettings(model=self.model.id)
        )
        self.started = time.monotonic()
        await resolve(
            self.publish(
                ProviderRequestEvent(
                    request_id=self.request_id,
                    provider=self.model.provider,
                    model=self.model.id,
                    url=None,
                    body=body,
                    repairs=repairs,
                    simulated=True,
                )
            )
        )

    def first_token(self) -> None:
        if self.ttft_ms is None:
            self.ttft_ms = (time.monotonic() - self.started) * 1000

    async def response(self, builder: StreamBuilder, *, aborted: bool = False) -> None:
        message = builder.message
        finish = (
            None
            if aborted or message.stop_reason is None
            else FINISH_REASONS.get(message.stop_reason)
        )
        await resolve(
            self.publish(
                ProviderResponseEvent(
                    request_id=self.request_id,
                    status=None,
                    ttft_ms=self.ttft_ms,
                    total_ms=(time.monotonic() - self.started) * 1000,
                    usage=None if aborted else message.usage,
                    error="Request was aborted" if aborted else message.error_message,
                    finish_reason=finish,
                    aborted=aborted,
                    simulated=True,
                )
            )
        )


def _last_tool_results(context: LlmContext) -> list[ToolResultMessage]:
    """The results of the last assistant reply's calls, even when the user has spoken
    since (a run aborted at a call, then "go on", answers that call's result too).
    Aborted replies are skipped: their turn is played again."""
    results: list[ToolResultMessage] = []
    for m in reversed(context.messages):
        if isinstance(m, AssistantMessage):
            if m.stop_reason == "aborted":
                continue
            break
        if isinstance(m, ToolResultMessage):
            results.append(m)
    return results[::-1]


class _Tally:
    """What the provider needs to know about a context's messages."""

    __slots__ = ("source", "messages", "played", "replies", "chars")

    def __init__(
        self, source: Sequence[Any], messages: list[Any], played: int, replies: int, chars: int
    ) -> None:
        self.source = source
        self.messages = messages
        """A copy of the counted messages (the source list may grow later)."""
        self.played = played
        """Assistant replies that were not aborted: the index of the turn to play."""
        self.replies = replies
        """All assistant replies: numbers the tool call ids."""
        self.chars = chars
        """Characters of text in the messages, for the usage estimate."""
