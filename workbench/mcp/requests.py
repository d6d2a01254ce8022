"""What an MCP server asks of the client: a model reply (sampling) and input from the
user (elicitation).

The MCP spec asks a client to keep a person in the loop for both, so a request goes
to an `Asker`: the app's shows a dialog (see `workbench.widgets.mcp_requests`), and without a
person `PolicyAsker` follows the run's `--approve`: sampling runs only with
`--approve all`, elicitation is always declined (nobody is there to answer).

A sampling request is answered by the run's own model (`Sampler`): its messages and
system prompt go to the same provider as the agent's requests, as a request of its
own (the network view shows it), with no tools. What the request asks for is
honoured where the provider can: `maxTokens`, `temperature` and `stopSequences` go
into the request of a provider with settings (an OpenAI-compatible one), the model
can be another than the run's (a person picks it, seeing the server's
`modelPreferences`), and a reply is cut at the first stop sequence whatever the
provider did. `sent_parameters` says which of them reach the model.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import mcp_types

from workbench.agent import (
    AssistantMessage,
    ImageContent,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    UserMessage,
)
from workbench.agent.content_caps import DEFAULT_CAPS, cap_images
from workbench.agent.types import AssistantContent
from workbench.bus_events import McpSamplingEvent, SamplingDecision

DECLINED = -1
"""The JSON-RPC error code sent for a sampling request the user (or policy) declined."""


class SampleFn(Protocol):
    """Runs a sampling request on a model (the run's, or the one named `model`)."""

    def __call__(
        self, params: mcp_types.CreateMessageRequestParams, model: str | None = None, /
    ) -> Awaitable[mcp_types.CreateMessageResult]: ...


class Asker(Protocol):
    """Answers what servers ask; `server` names who asks."""

    async def elicit(
        self, server: str, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult: ...

    async def sample(
        self, server: str, params: mcp_types.CreateMessageRequestParams, run: SampleFn
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData: ...


class PolicyAsker:
    """Answers without a person, by the run's approval policy; `on_note` is told each
    answer (a line on stderr, headless)."""

    def __init__(self, approve: str, on_note: Callable[[str], None] | None = None) -> None:
        self.approve = approve
        self.on_note = on_note

    async def elicit(
        self, server: str, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self._note(
            f"MCP server {server} asked for input ({params.message!r}): declined, "
            "nobody is here to answer"
        )
        return mcp_types.ElicitResult(action="decline")

    async def sample(
        self, server: str, params: mcp_types.CreateMessageRequestParams, run: SampleFn
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        if self.approve != "all":
            self._note(
                f"MCP server {server} asked the model for a reply: declined "
                f"(--approve {self.approve}; --approve all lets it through)"
            )
            return declined("the user declined the sampling request")
        self._note(f"MCP server {server} asked the model for a reply: sent (--approve all)")
        return await run(params)

    def _note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)


def declined(why: str) -> mcp_types.ErrorData:
    return mcp_types.ErrorData(code=DECLINED, message=why)


class Sampler:
    """Answers sampling requests with the run's model (`stream_fn` is the provider,
    not the stepper's wrapper: a server's request is not the agent's turn)."""

    def __init__(self, stream_fn: Any, model: Model) -> None:
        self.stream_fn = stream_fn
        self.model = model

    def configurable(self) -> bool:
        """Whether the provider takes per-request settings (max tokens, temperature,
        stop sequences, the model)."""
        settings = getattr(self.stream_fn, "settings", None)
        return settings is not None and hasattr(settings, "model_copy")

    def _for(self, params: mcp_types.CreateMessageRequestParams, model: str | None) -> Any:
        """The provider, set up for this request when it can be."""
        if not self.configurable():
            return self.stream_fn
        settings = self.stream_fn.settings
        update: dict[str, Any] = {"max_tokens": params.max_tokens}
        if params.temperature is not None:
            update["temperature"] = params.temperature
        if model:
            update["model"] = model
        if params.stop_sequences:
            update["extra_body"] = {**settings.extra_body, "stop": list(params.stop_sequences)}
        provider = copy.copy(self.stream_fn)
        provider.settings = settings.model_copy(update=update)
        return provider

    async def __call__(
        self, params: mcp_types.CreateMessageRequestParams, model: str | None = None
    ) -> mcp_types.CreateMessageResult:
        provider = self._for(params, model)
        used = getattr(provider, "model", None) or self.model
        context = LlmContext(params.system_prompt or "", to_messages(params.messages), [])
        final: AssistantMessage | None = None
        async for event in provider(used, context, StreamOptions()):
            if event.type in ("done", "error"):
                final = event.message
        if final is None or final.stop_reason in ("error", "aborted"):
            why = final.error_message if final is not None else "no reply"
            raise RuntimeError(f"the model failed to answer: {why}")
        stop = {"stop": "endTurn", "length": "maxTokens"}.get(final.stop_reason, final.stop_reason)
        text, cut = cut_at_stop(final.text, params.stop_sequences or [])
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=text),
            model=used.id,
            stop_reason="stopSequence" if cut else stop,
        )


def cut_at_stop(text: str, stops: list[str]) -> tuple[str, bool]:
    """`text` up to the first of `stops` in it, and whether it was cut."""
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return (text[: min(found)], True) if found else (text, False)


def sent_parameters(params: mcp_types.CreateMessageRequestParams, configurable: bool) -> list[str]:
    """Each parameter of the request, and whether it reaches the model (one line each)."""
    how = "sent with the request" if configurable else "not supported by this provider"
    lines = [f"maxTokens {params.max_tokens}: {how}"]
    if params.temperature is not None:
        lines.append(f"temperature {params.temperature}: {how}")
    if params.stop_sequences:
        stops = ", ".join(repr(s) for s in params.stop_sequences)
        lines.append(f"stopSequences {stops}: {how}; the reply is cut at the first one")
    prefs = params.model_preferences
    if prefs is not None:
        hints = ", ".join(h.name or "?" for h in prefs.hints or [])
        wants = [
            f"{name} {value}"
            for name, value in (
                ("cost", prefs.cost_priority),
                ("speed", prefs.speed_priority),
                ("intelligence", prefs.intelligence_priority),
            )
            if value is not None
        ]
        lines.append(
            "modelPreferences: "
            + "; ".join(x for x in (f"hints {hints}" if hints else "", ", ".join(wants)) if x)
            + " (you pick the model)"
        )
    if params.include_context not in (None, "none"):
        lines.append(
            f"includeContext {params.include_context}: not included (the workbench "
            "shares no conversation with servers)"
        )
    return lines


def to_messages(messages: list[mcp_types.SamplingMessage]) -> list[Any]:
    """A sampling request's messages as the runtime's: text and images; other content
    is described in words."""
    out: list[Any] = []
    for message in messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        parts: list[Any] = []
        for block in blocks:
            if isinstance(block, mcp_types.TextContent):
                parts.append(TextContent(text=block.text))
            elif isinstance(block, mcp_types.ImageContent) and message.role == "user":
                parts.append(ImageContent(data=block.data, mime_type=block.mime_type))
            else:
                parts.append(TextContent(text=f"[{getattr(block, 'type', 'content')} content]"))
        parts = cap_images(parts, DEFAULT_CAPS) or parts  # a huge image never reaches the model
        if message.role == "user":
            out.append(UserMessage(content=parts))
        else:
            texts: list[AssistantContent] = [p for p in parts if isinstance(p, TextContent)]
            out.append(AssistantMessage(content=texts, stop_reason="stop"))
    return out


KEPT_CHARS = 2000
"""Of a sampling request's last message and of the reply, what the session keeps."""


def _texts(params: mcp_types.CreateMessageRequestParams) -> list[str]:
    """The request's system prompt and each message's text, as a person would edit them."""
    texts = [params.system_prompt or ""]
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts.append(
            message.role
            + ":"
            + "\n".join(getattr(b, "text", f"[{getattr(b, 'type', 'content')}]") for b in blocks)
        )
    return texts


def sampling_event(
    server: str,
    asked: mcp_types.CreateMessageRequestParams,
    sent: mcp_types.CreateMessageRequestParams | None,
    outcome: mcp_types.CreateMessageResult | mcp_types.ErrorData,
) -> McpSamplingEvent:
    """What became of a server's sampling request: `asked` is what the server sent,
    `sent` what went to the model (None: nothing did), `outcome` what the server got."""
    request = sent or asked
    last = _texts(request)[-1].split(":", 1)[1] if request.messages else ""
    if isinstance(outcome, mcp_types.ErrorData):
        decision: SamplingDecision = "declined" if outcome.code == DECLINED else "failed"
        return McpSamplingEvent(
            server=server, request=last[:KEPT_CHARS], decision=decision, error=outcome.message
        )
    reply = getattr(outcome.content, "text", f"[{getattr(outcome.content, 'type', 'content')}]")
    edited = sent is not None and _texts(sent) != _texts(asked)
    written = getattr(outcome, "model", "") == WRITTEN
    return McpSamplingEvent(
        server=server,
        request=last[:KEPT_CHARS],
        decision="written" if written else "edited" if edited else "sent",
        reply=reply[:KEPT_CHARS],
    )


WRITTEN = "written by the user"
"""The `model` of a reply a person wrote or changed (no model answered it as sent)."""
