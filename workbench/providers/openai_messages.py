"""From a transcript to a chat-completions request body: pure functions.

The workbench lets people abort, inject, edit and retry, so a transcript can hold
things a server would refuse: a reply cut off mid tool call, calls nobody answered,
results for calls that are no longer sent. `repair_transcript` makes any transcript
valid, the same way every time, and says what it changed; `convert_messages` then
writes the OpenAI wire format. The rules:

- An assistant message that ended in error or abort keeps only its text (the partial
  answer gives the next turn continuity). Its thinking and tool calls are dropped,
  together with their results: its arguments may be cut off, and none of them ran.
- A kept tool call without a result gets a synthetic error result ("No result
  provided"), placed after the real ones, before the next user or assistant message.
- A tool result whose call is not in the assistant message just before it is dropped.
- An assistant message left with neither text nor tool calls is dropped.
- Thinking is never sent back (chat completions has no field for it, and DeepSeek-style
  servers reject `reasoning_content` in requests).

Tool calls carry `raw_arguments` byte for byte when it is a JSON object. When it is
not (malformed or truncated JSON, an array, ""), the "repair" policy sends
`json.dumps(arguments)` instead, because Ollama, vLLM and llama.cpp parse the string
and reject the whole request otherwise; the call's error result already quotes the
raw string to the model. The "verbatim" policy always sends the raw string (OpenAI
accepts any string).

Tool results can only be text in chat completions: images a tool returned are sent
in one user message right after the block of tool messages, as pi-ai does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.agent.config import LlmContext
from workbench.agent.tool import AgentTool
from workbench.agent.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from workbench.json_text import loads, without_surrogates
from workbench.providers.settings import TOOL_CHOICE_KEYWORDS, OpenAISettings

JsonDict = dict[str, Any]
MalformedArguments = Literal["repair", "verbatim"]

NO_RESULT_TEXT = "No result provided"
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"


@dataclass
class Repaired:
    """A transcript made valid for a request, and what was changed to get there."""

    messages: list[Message]
    notes: list[str] = field(default_factory=list)
    """One human-readable line per change (shown in the network view)."""


# -- repair --------------------------------------------------------------------------


def repair_transcript(messages: Sequence[Message]) -> Repaired:
    """Make `messages` a valid chat-completions transcript (see the module docstring)."""
    repair = TranscriptRepair()
    for message in messages:
        repair.add(message)
    repair.close_pending()
    return Repaired(repair.out, repair.notes)


class TranscriptRepair:
    """`repair_transcript` one message at a time, for a transcript that grows.

    Before each message that is not a tool result, the calls still open are closed;
    from then on nothing before that message can change, which is what lets a request
    body be built from the previous one's (`workbench.providers.request_bodies`).
    """

    def __init__(self, dropped_calls: set[str] | None = None) -> None:
        self.out: list[Message] = []
        self.notes: list[str] = []
        self.pending: list[ToolCall] = []
        self.answered: set[str] = set()
        self.dropped_calls: set[str] = set(dropped_calls or ())
        """Ids of calls dropped with their reply: their results are dropped silently."""

    def close_pending(self) -> None:
        for call in self.pending:
            if call.id not in self.answered:
                self.out.append(_missing_result(call))
                self.notes.append(
                    f"added a '{NO_RESULT_TEXT}' error result for call {call.id} ({call.name})"
                )
        self.pending.clear()
        self.answered.clear()

    def add(self, message: Message) -> None:
        if isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if any(c.id == call_id for c in self.pending) and call_id not in self.answered:
                self.answered.add(call_id)
                self.out.append(message)
            elif call_id not in self.dropped_calls:
                self.notes.append(
                    f"dropped the result for call {call_id} ({message.tool_name}): "
                    "its call is not in the request"
                )
            return
        self.close_pending()
        if isinstance(message, AssistantMessage):
            self.dropped_calls.update(c.id for c in message.tool_calls)
            kept = _repair_assistant(message, self.notes)
            if kept is None:
                return
            self.dropped_calls.difference_update(c.id for c in kept.tool_calls)
            self.pending.extend(kept.tool_calls)
            message = kept
        self.out.append(message)


def _repair_assistant(message: AssistantMessage, notes: list[str]) -> AssistantMessage | None:
    failed = message.stop_reason in ("error", "aborted")
    if failed:
        kept = [c for c in message.content if isinstance(c, TextContent) and c.text]
        dropped = [c for c in message.content if isinstance(c, ToolCall)]
        if dropped:
            ids = ", ".join(c.id for c in dropped)
            notes.append(
                f"dropped {len(dropped)} tool call(s) ({ids}) of a reply that ended in "
                f"{message.stop_reason}, with their results"
            )
        message = message.model_copy(update={"content": kept})
    if not message.text and not message.tool_calls:
        why = f"that ended in {message.stop_reason}" if failed else "with no text or tool calls"
        notes.append(f"dropped an assistant message {why}")
        return None
    return message


def _missing_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=NO_RESULT_TEXT)],
        is_error=True,
    )


# -- conversion ----------------------------------------------------------------------


def convert_messages(
    system_prompt: str,
    messages: Sequence[Message],
    *,
    malformed_arguments: MalformedArguments = "repair",
) -> list[JsonDict]:
    """The `messages` array for an already repaired transcript."""
    out: list[JsonDict] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    images: list[ImageContent] = []
    for message in messages:
        if not isinstance(message, ToolResultMessage) and images:
            out.append(_tool_images_message(images))
            images = []
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            out.append(assistant_message(message, malformed_arguments=malformed_arguments))
        elif isinstance(message, ToolResultMessage):
            out.append(tool_message(message))
            images += [c for c in message.content if isinstance(c, ImageContent)]
    if images:
        out.append(_tool_images_message(images))
    return out


def user_content(content: str | Sequence[TextContent | ImageContent]) -> str | list[JsonDict]:
    """A string, or content parts when there are images or several text blocks."""
    if isinstance(content, str):
        return content
    if len(content) == 1 and isinstance(content[0], TextContent):
        return content[0].text
    return [_part(c) for c in content]


def assistant_message(
    message: AssistantMessage, *, malformed_arguments: MalformedArguments = "repair"
) -> JsonDict:
    """Text as one string ("" when there is none: some servers reject null), then calls."""
    out: JsonDict = {"role": "assistant", "content": message.text}
    calls = message.tool_calls
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": wire_arguments(call, malformed_arguments),
                },
            }
            for call in calls
        ]
    return out


def wire_arguments(call: ToolCall, malformed_arguments: MalformedArguments = "repair") -> str:
    """The argument string to send for `call` (see the module docstring)."""
    raw = call.raw_arguments
    if raw is None:
        return json.dumps(call.arguments, ensure_ascii=False)
    if malformed_arguments == "verbatim" or is_json_object(raw):
        return raw
    return json.dumps(call.arguments, ensure_ascii=False)


def is_json_object(raw: str) -> bool:
    try:
        return isinstance(loads(raw), dict)
    except ValueError:
        return False


def tool_message(message: ToolResultMessage) -> JsonDict:
    text = message.text
    if not text and any(isinstance(c, ImageContent) for c in message.content):
        text = "(see attached image)"
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}


def _tool_images_message(images: list[ImageContent]) -> JsonDict:
    parts: list[JsonDict] = [{"type": "text", "text": TOOL_IMAGES_TEXT}]
    return {"role": "user", "content": parts + [_part(i) for i in images]}


def _part(block: TextContent | ImageContent) -> JsonDict:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text}
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"},
    }


# -- tools and the body --------------------------------------------------------------


def tool_definitions(tools: Sequence[AgentTool]) -> list[JsonDict]:
    """Function tools from the tools' pydantic parameter schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.json_schema,
            },
        }
        for t in tools
    ]


def tool_choice_param(choice: str, tools: Sequence[AgentTool]) -> str | JsonDict:
    """`auto`/`required`/`none` as is; a tool name as a forced function choice.

    Raises:
        ValueError: the name is not one of `tools` (the server would reject it anyway).
    """
    if choice in TOOL_CHOICE_KEYWORDS:
        return choice
    names = [t.name for t in tools]
    if choice not in names:
        raise ValueError(
            f"tool choice {choice!r} is not one of the tools offered ({', '.join(names) or 'none'})"
        )
    return {"type": "function", "function": {"name": choice}}


def build_request_body(
    model: str, context: LlmContext, settings: OpenAISettings
) -> tuple[JsonDict, list[str]]:
    """The complete JSON body of one streamed request, and the repair notes.

    `settings.extra_body` is merged last, so it can override any field (as the SDK does).
    A provider that sends many requests builds them with `RequestBodies` instead, which
    gives the same body converting each message once.

    Raises:
        ValueError: the settings ask for something this context cannot satisfy.
    """
    repaired = repair_transcript(context.messages)
    converted = convert_messages(
        "", repaired.messages, malformed_arguments=settings.malformed_arguments
    )
    wire, replaced = without_surrogates(converted)
    return assemble_body(model, context, settings, wire, repaired.notes, replaced)


def assemble_body(
    model: str,
    context: LlmContext,
    settings: OpenAISettings,
    messages: list[JsonDict],
    notes: list[str],
    replaced: int,
) -> tuple[JsonDict, list[str]]:
    """The body around the transcript's wire `messages` (already free of lone
    surrogates, `replaced` of them), and the notes to show with it.

    Raises:
        ValueError: the settings ask for something this context cannot satisfy.
    """
    system: list[JsonDict] = []
    if context.system_prompt:
        system = [{"role": "system", "content": context.system_prompt}]
    sent = system + messages
    body: JsonDict = {"model": model, "messages": sent, "stream": True}
    if settings.include_usage:
        body["stream_options"] = {"include_usage": True}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        body[settings.resolved_max_tokens_param()] = settings.max_tokens
    if context.tools:
        body["tools"] = tool_definitions(context.tools)
        if settings.tool_choice is not None:
            body["tool_choice"] = tool_choice_param(settings.tool_choice, context.tools)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    elif settings.tool_choice not in (None, "auto", "none"):
        raise ValueError(f"tool choice {settings.tool_choice!r} needs tools, and none are offered")
    body.update(settings.extra_body)
    for key, value in body.items():
        if value is sent:  # the transcript's messages are clean already
            value, more = without_surrogates(system)
            value = value + messages if more else sent
        else:
            value, more = without_surrogates(value)
        body[key] = value
        replaced += more
    if replaced:
        return body, [
            *notes,
            f"{replaced} lone surrogate(s) (text that is not UTF-8, such as a file name's "
            "bytes) sent as U+FFFD: a request body must be UTF-8",
        ]
    return body, notes
