"""One foreign agent's conversation, run through the workbench's own loop.

Each conversation is an `Agent` like any other, so its bus carries the events a
native run publishes and the fold, the app, the recorder and replay work on it
unchanged. What differs is where the model and the tools are:

- the model is the upstream, reached through the agent's own requests: each turn's
  `stream_fn` takes the agent's next request, forwards it and reads the answer
  (`workbench.proxy.forward`);
- every tool is a *foreign* tool, declared by the agent's request: "executing" it
  means releasing the response that carries the call to the agent and waiting
  for the agent's next request, whose `tool` message with the call's id is the
  result. A call whose result that request does not carry is ended as an error
  saying so (flagged: "no result came back").

The gate and the stepper are the native ones, on `before_tool_call`. A call they
let run goes out with exactly the arguments they judged; a call they stop (deny,
an answer written by a person, arguments that are not a JSON object) is taken out
of the response. Its answer goes to the model in the same turn when every call of
the reply was taken out (`workbench.proxy.continuation`), else with the agent's next
request (`wire.restore_removed`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import anyio

from workbench.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    Model,
    TextContent,
    UserMessage,
)
from workbench.agent.types import Message
from workbench.permissions import PermissionGate
from workbench.permissions.hooks import wait_unless_aborted
from workbench.proxy.exchange import Exchange
from workbench.proxy.formats.base import Tool
from workbench.proxy.history import to_messages
from workbench.proxy.wire import (
    MessageKey,
    ReleasedCall,
    RemovedCall,
    Repair,
    Verdict,
    content_text,
)
from workbench.runtime import Runtime
from workbench.wiring import supervise

if TYPE_CHECKING:
    from workbench.proxy.continuation import Continuation
    from workbench.proxy.formats.base import SentCall, WireEvent
    from workbench.proxy.server import Proxy

ANY_OBJECT: dict[str, Any] = {"type": "object"}
"""What the proxy checks a foreign call's arguments against: a JSON object. The agent
validates against its own schema, as it does without the proxy."""
NO_RESULT = (
    "No result came back: the agent's next request did not answer this call "
    "(no tool message with its id)"
)
PROXY_STOPPED = "No result came back: the proxy stopped before the agent answered this call"


class NoResult(Exception):
    """The agent never answered a released call (the loop makes it an error result)."""


class _Answer:
    """The agent's tool message for one released call, once a request brings it."""

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.message: dict[str, Any] | None = None
        self.why = NO_RESULT

    def settle(self, message: dict[str, Any] | None, why: str = NO_RESULT) -> None:
        if not self.event.is_set():
            self.message, self.why = message, why
            self.event.set()


class PendingRelease:
    """A response held for the decisions on its tool calls."""

    def __init__(
        self,
        exchange: Exchange,
        request_id: str,
        message: AssistantMessage,
        held: list[WireEvent] | None,
        body: dict[str, Any] | None,
        sent: dict[str, SentCall] | None = None,
    ) -> None:
        self.exchange = exchange
        self.request_id = request_id
        self.message = message
        self.held = held
        """A streamed response: the SSE events from the first tool call on."""
        self.body = body
        """A whole response: its JSON."""
        self.sent = sent or {}
        """The calls streamed to the agent before the response was held."""
        self.follow: Continuation | None = None
        """The reply this response goes on with (the proxy answered its denied calls)."""
        self.upstream_body: dict[str, Any] = exchange.body
        """The request as sent upstream for this response."""
        self.calls = {c.id: c for c in message.tool_calls}
        self.outcome: dict[str, ReleasedCall | RemovedCall] = {}


class Conversation:
    """One conversation: an agent run by the workbench's loop on a foreign agent's requests."""

    def __init__(self, proxy: Proxy, number: int, first: Exchange) -> None:
        from workbench.proxy.forward import Forwarder

        self.proxy = proxy
        self.number = number
        self.name = f"conversation {number}"
        body = first.body
        self.format = first.format
        model = Model(
            id=first.format.model(body, first.path), provider="proxy", base_url=proxy.upstream
        )
        system = first.format.system(body)
        self.forwarder = Forwarder(self)
        self.agent = Agent(
            stream_fn=self.forwarder,
            model=model,
            system_prompt=system,
            should_stop_after_turn=lambda _turn: (
                self.released_calls == 0 and self.queued == 0 and self.follow is None
            ),
        )
        self.recorder = proxy.start_recording(self)  # first on the bus, as in a native run
        gate = PermissionGate(
            proxy.rules,
            publish=self.agent.publish,
            policy=proxy.options.approve,
            rules_file=proxy.rules_file,
            rules_file_display=proxy.rules_file_display,
        )
        # The one wiring (`supervise`), with one set of breakpoints for the whole proxy
        # (one added or removed while a conversation is on screen applies to every
        # conversation, current and later), the forwarder publishing what it forwards
        # itself, and no error-result pause (`@error`): the only foreign calls that fail
        # are ones the agent never answered, and an answer written there would reach
        # neither the agent nor the model.
        stepper = supervise(
            self.agent,
            gate,
            step=proxy.options.step,
            breakpoints=proxy.breakpoints,
            report=False,
            error_pause=False,
        )
        self.agent.subscribe(self._on_event)
        self.runtime = Runtime(
            self.agent,
            proxy.workspace,
            None,
            "",
            model,
            gate=gate,
            stepper=stepper,
            recorder=self.recorder,
        )
        self.tools: dict[str, AgentTool] = {}
        self.known: list[MessageKey] = []
        """The messages the agent's next request starts with: its last request's, then
        the reply it received."""
        self.busy = False
        """A request of this conversation is in flight (its reply is not released yet)."""
        self.released_calls = 0
        """How many tool calls the last released reply carried."""
        self.answers: dict[str, _Answer] = {}
        self.repairs: list[Repair] = []
        self.pending: PendingRelease | None = None
        self.follow: Continuation | None = None
        """A reply whose calls were all denied, to go on upstream in the next turn."""
        self.queued = 0
        self._inbox_send, self._inbox = anyio.create_memory_object_stream[Exchange](math.inf)
        self._running = False
        self._executing: set[str] = set()
        self.calls_seen = 0
        self.inflight: Exchange | None = None
        """The request being answered (its retries follow it: `Exchange.adopt`)."""
        self.after_failure = False
        """The last request failed: only its retry may continue this conversation."""
        self.ended = ""
        """Why the conversation ended before its run did (its client went away)."""
        self.never_answered: list[str] = []
        """Released calls whose result never came back (flagged as errors)."""
        self.reply_ids: tuple[str, str] | None = None
        """The reply being answered: the response id the agent gets, and the upstream's
        id to continue from (another when the reply went on, `continuation`)."""
        self.by_id: dict[str, str] = {}
        """The agent's last reply by its id: a request that continues from that id
        (`previous_response_id`) continues this conversation, from the upstream's id."""

    # -- requests in ---------------------------------------------------------------

    def deliver(self, exchange: Exchange) -> None:
        """Take the agent's next request: answer the calls it answers, run what it adds."""
        self.busy = True
        self.after_failure = False
        exchange.on_gone = self.client_gone
        self.declare_tools(exchange.tools)
        new = [m for m in exchange.messages[len(self.known) :] if isinstance(m, dict)]
        if not self.known:  # a first request may carry history: the run starts after it
            start = len(new)
            while start and new[start - 1].get("role") == "user":
                start -= 1
            self.agent.state.messages = to_messages(new[:start])
            new = new[start:]
        results = {m.get("tool_call_id"): m for m in new if m.get("role") == "tool"}
        for call_id, answer in self.answers.items():
            answer.settle(results.get(call_id))
        users = [
            UserMessage(content=content_text(m.get("content")))
            for m in new
            if m.get("role") == "user"
        ]
        self.queued += 1
        self._inbox_send.send_nowait(exchange)
        if self._running:
            for message in users:
                self.agent.steer(message)
        else:
            self._running = True
            self.proxy.start_soon(self._run, users)

    async def next_exchange(self, signal: Any) -> Exchange | None:
        """The agent's next request for this conversation (None: the run was aborted)."""
        got: list[Exchange] = []
        ready = anyio.Event()

        async def take() -> None:
            got.append(await self._inbox.receive())
            ready.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(take)
            await wait_unless_aborted(ready, signal)
            tg.cancel_scope.cancel()
        if not got:
            return None
        self.queued -= 1
        return got[0]

    async def _run(self, prompts: list[Message]) -> None:
        try:
            while True:
                await self.agent.prompt(prompts)
                if not self.queued:
                    return
                prompts, _ = self.agent.queued  # asked for while the run was ending
                self.agent.clear_queues()
        finally:
            self._running = False

    def declare_tools(self, tools: list[Tool]) -> None:
        """Foreign tools for the functions a request declares (new names only)."""
        for tool in tools:
            self.foreign_tool(tool.name, tool.description, tool.schema)

    def foreign_tool(
        self, name: str, description: str = "", schema: dict[str, Any] | None = None
    ) -> AgentTool:
        """The tool the loop runs for calls of `name` (made on first use)."""
        tool = self.tools.get(name)
        if tool is None:
            tool = AgentTool(
                name=name,
                label=name,
                description=description or "(declared by the agent)",
                parameters=ANY_OBJECT,
                execute=self._execute,
                source="proxy",
            )
            tool.__dict__["json_schema"] = schema or ANY_OBJECT  # what the model was shown
            self.tools[name] = tool
            self.agent.state.tools.append(tool)
        return tool

    # -- calls out -------------------------------------------------------------------

    async def _execute(
        self, call_id: str, params: Any, signal: Any, _on_update: Any
    ) -> AgentToolResult:
        """Release the call to the agent, then wait for the agent's result for it."""
        self._executing.add(call_id)
        answer = self.answers.setdefault(call_id, _Answer())
        pending = self.pending
        if pending is not None and call_id in pending.calls:
            call = pending.calls[call_id]
            await self._settle(
                call_id, ReleasedCall(call_id, call.name, params.model_dump(mode="json"))
            )
        await wait_unless_aborted(answer.event, signal)
        self.answers.pop(call_id, None)
        if not answer.event.is_set() or answer.message is None:
            self.never_answered.append(call_id)
            raise NoResult(
                answer.why
                if answer.event.is_set()
                else "The run was aborted while waiting for the agent's result"
            )
        return AgentToolResult(
            content=[TextContent(text=content_text(answer.message.get("content")))],
            details={"answered_by": "agent"},
        )

    async def _on_event(self, event: Any, _signal: Any = None) -> None:
        """A held call the loop ended without executing it was taken out of the response."""
        if event.type == "tool_execution_start":
            self.calls_seen += 1
        if event.type != "tool_execution_end" or event.tool_call_id in self._executing:
            return
        pending = self.pending
        if pending is None or event.tool_call_id not in pending.calls:
            return
        call = pending.calls[event.tool_call_id]
        text = "".join(getattr(c, "text", "") for c in event.result.content)
        removed = RemovedCall(call.id, call.name, call.raw_arguments or "", text)
        await self._settle(event.tool_call_id, removed)

    async def _settle(self, call_id: str, outcome: ReleasedCall | RemovedCall) -> None:
        pending = self.pending
        assert pending is not None
        pending.outcome[call_id] = outcome
        if len(pending.outcome) == len(pending.calls):
            self.pending = None
            await self.forwarder.release(pending)

    def expect(self, exchange: Exchange, reply_key: MessageKey, call_ids: list[str]) -> None:
        """The reply went out: the next request starts with it and answers `call_ids`."""
        self.known = [*exchange.keys, reply_key]
        self.by_id = dict([self.reply_ids]) if self.reply_ids is not None else {}
        self.reply_ids = None
        self.released_calls = len(call_ids)
        for call_id in call_ids:
            self.answers.setdefault(call_id, _Answer())
        self.busy = False

    def failed(self, exchange: Exchange) -> None:
        """No reply went out (an error): the agent's retry repeats the same request (and
        only a request with exactly these messages continues this conversation)."""
        self.by_id = {}
        self.known = list(exchange.keys)
        self.released_calls = 0
        self.busy = False
        self.after_failure = True

    def retry_of(self, exchange: Exchange) -> bool:
        """Whether `exchange` is the client asking again for the request in flight, its
        first connection gone (an SDK's retry after its timeout)."""
        current = self.inflight.last if self.inflight is not None else None
        return (
            self.busy
            and current is not None
            and current.gone
            and current.format is exchange.format
            and current.raw == exchange.raw
        )

    def client_gone(self, exchange: Exchange) -> None:
        """The client hung up before its answer was complete: unless it asks again within
        the grace, the conversation ends (shown and recorded as such)."""
        self.proxy.start_timer(self._end_unless_back, exchange)

    async def _end_unless_back(self, exchange: Exchange) -> None:
        await anyio.sleep(self.proxy.options.retry_grace)
        if exchange.follower is not None or self.inflight is not exchange or not self.busy:
            return
        self.ended = "the client went away before its answer was complete"
        for answer in self.answers.values():
            answer.settle(None, "No result came back: " + self.ended)
        self.agent.abort("The client went away")

    def remember_hidden(
        self, exchange: Exchange, reply_key: MessageKey, follow: Continuation | None
    ) -> None:
        """A reply that went on upstream: its hidden turns go back in the next request."""
        if follow is not None and follow.hidden:
            self.repairs.append(
                Repair(len(exchange.messages), reply_key, None, [], [], follow.hidden)
            )

    def remember_removed(
        self,
        exchange: Exchange,
        reply_key: MessageKey,
        verdict: Verdict,
        message: AssistantMessage,
        follow: Continuation | None = None,
    ) -> None:
        if not verdict.removed or not exchange.format.repairs:
            self.remember_hidden(exchange, reply_key, follow)
            return
        kept = {c.id: c for c in verdict.kept}
        calls = []
        for call in message.tool_calls:
            if call.id in kept:
                calls.append(kept[call.id].as_call())
            else:
                calls.append(
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.raw_arguments or ""},
                    }
                )
        self.repairs.append(
            Repair(
                position=len(exchange.messages),
                released_key=reply_key,
                content=verdict.text or None,
                calls=calls,
                results=[
                    {"role": "tool", "tool_call_id": c.id, "content": c.result}
                    for c in verdict.removed
                ],
                hidden=follow.hidden if follow is not None else [],
            )
        )

    # -- the end ---------------------------------------------------------------------

    def stop(self) -> None:
        """The proxy is stopping: flag every call still waiting and end the run."""
        for answer in self.answers.values():
            answer.settle(None, PROXY_STOPPED)
        self.agent.abort("The proxy stopped")

    @property
    def unanswered(self) -> list[str]:
        """Released calls whose result has not come back (yet)."""
        return [i for i, a in self.answers.items() if not a.event.is_set()]
