"""OpenAI Chat Completions on the wire: what a streamed event holds, and the response
as released to the agent once the gate has decided.

Every event is parsed as JSON, as the client will parse it, before anything about it
is decided: a key written with escapes (`"tool\\u005fcalls"`) is the same key to
the client, so it is the same key here. What the proxy's reader does not take as a
tool call the client must not get as one either: a legacy `function_call` and tool
calls in any choice but the first are taken out of the event before it goes on.

A streamed response is held from the first call that needs a decision on. Calls
streamed before that one (`SentCall`) are already with the agent, in part: at
release they get the rest of their arguments at their own index, and the calls
held are added whole after them, at the next indices, so the agent's accumulator
builds each call once.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from workbench.agent import AssistantMessage
from workbench.providers.openai_stream import ChunkReader
from workbench.providers.stream_builder import StreamBuilder
from workbench.proxy.formats.base import SentCall, StreamRelease, Tool, WireEvent, WireFormat
from workbench.proxy.wire import (
    JsonDict,
    RemovedCall,
    Repair,
    Verdict,
    content_text,
    restore_removed,
)
from workbench.sse import SSEEvent, sse_event


def read_event(event: SSEEvent) -> WireEvent:
    data = event.data
    if data is not None and data.strip() == "[DONE]":
        return WireEvent(event, None, event.raw, done=True)
    chunk = event.json()
    if not isinstance(chunk, dict):
        return WireEvent(event, chunk, event.raw)
    clean, changed = without_unjudged(chunk)
    raw = sse_event(clean, event.name) if changed else event.raw
    return WireEvent(event, clean, raw, calls=_has_calls(clean))


def _first(choice: Any) -> bool:
    return isinstance(choice, dict) and choice.get("index", 0) in (0, None)


def _has_calls(chunk: JsonDict) -> bool:
    choices = chunk.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if _first(choice) else None
        if isinstance(delta, dict) and delta.get("tool_calls"):
            return True
    return False


def without_unjudged(chunk: JsonDict) -> tuple[JsonDict, bool]:
    """The chunk without calls the reader does not read (see the module's docstring)."""
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return chunk, False
    changed = False
    out = []
    for choice in choices:
        if isinstance(choice, dict):
            for key in ("delta", "message"):
                part = choice.get(key)
                if not isinstance(part, dict):
                    continue
                drop = {"function_call"} if _first(choice) else {"function_call", "tool_calls"}
                if drop & part.keys():
                    choice = {**choice, key: {k: v for k, v in part.items() if k not in drop}}
                    changed = True
        out.append(choice)
    return ({**chunk, "choices": out} if changed else chunk), changed


def release_stream(
    held: Sequence[WireEvent], verdict: Verdict, sent: dict[str, SentCall]
) -> StreamRelease:
    """The held part of a streamed response, as released to the agent.

    Every held tool-call delta is dropped; the calls the agent already has in part get
    the rest of their arguments, and the other kept calls are sent whole, in one chunk
    before the finish reason. Chunks left empty by the drop are left out.
    """
    for removed in verdict.removed:
        if removed.id in sent:
            return StreamRelease(
                refused=f"{removed.name} ({removed.id}) was streamed before it was denied"
            )
    deltas: list[JsonDict] = []
    after = max((s.wire_index for s in sent.values()), default=-1) + 1
    for call in verdict.kept:
        part = sent.get(call.id)
        if part is None:
            deltas.append(call.as_delta(after))
            after += 1
        elif not call.untouched or not call.raw_arguments.startswith(part.arguments):
            return StreamRelease(
                refused=f"{call.name} ({call.id}) was streamed before it was edited"
            )
        elif rest := call.raw_arguments[len(part.arguments) :]:
            deltas.append({"index": part.wire_index, "function": {"arguments": rest}})
    out: list[bytes] = []
    template: JsonDict | None = None
    inserted = False

    def insert() -> None:
        nonlocal inserted
        inserted = True
        if template is None:
            return
        if verdict.kept:
            if not deltas:
                return
            delta: JsonDict = {"tool_calls": deltas}
        else:
            delta = {"content": verdict.notice}
        chunk = {k: v for k, v in template.items() if k not in ("choices", "usage")}
        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
        out.append(sse_event(chunk))

    if verdict.continued:
        return StreamRelease(_continued(held, verdict.notice))
    for item in held:
        chunk = item.chunk
        if not isinstance(chunk, dict):
            if item.done and not inserted:
                insert()
            out.append(item.raw)
            continue
        template = template or chunk
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            out.append(item.raw)
            continue
        changed = finishing = False
        kept_choices = []
        for choice in choices:
            if not _first(choice):
                kept_choices.append(choice)
                continue
            choice = dict(choice)
            delta_in = choice.get("delta")
            if isinstance(delta_in, dict) and "tool_calls" in delta_in:
                choice["delta"] = {k: v for k, v in delta_in.items() if k != "tool_calls"}
                changed = True
            if choice.get("finish_reason") is not None:
                finishing = True
                if not verdict.kept and choice["finish_reason"] == "tool_calls":
                    choice["finish_reason"] = "stop"
                    changed = True
            if not finishing and not _has_content(choice.get("delta")):
                changed = True
                continue
            kept_choices.append(choice)
        if finishing and not inserted:
            insert()
        if not changed:
            out.append(item.raw)
        elif kept_choices or chunk.get("usage") is not None:
            out.append(sse_event({**chunk, "choices": kept_choices}, item.event.name))
    if not inserted:
        insert()
    return StreamRelease(out)


def _continued(held: Sequence[WireEvent], separator: str) -> list[bytes]:
    """The held tail of a reply the model goes on with: its text, without its calls, its
    finish and its end (the continuation brings those), then the separator."""
    out = []
    template: JsonDict = {}
    for item in held:
        chunk = item.chunk
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not isinstance(choices, list) or not choices:
            continue  # [DONE], a usage chunk: the continuation has its own
        delta = choices[0].get("delta") if _first(choices[0]) else None
        text = delta.get("content") if isinstance(delta, dict) else None
        template = template or {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
        if isinstance(text, str) and text:
            choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
            out.append(sse_event({**chunk, "choices": [choice]}, item.event.name))
    if separator:
        choice = {"index": 0, "delta": {"content": separator}, "finish_reason": None}
        out.append(sse_event({**template, "choices": [choice]}))
    return out


def release_completion(body: JsonDict, verdict: Verdict) -> JsonDict:
    """A whole (non-streamed) completion, as released to the agent."""
    out = copy.deepcopy(body)
    choices = out.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return out
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return out
    if verdict.kept:
        message["tool_calls"] = [c.as_call() for c in verdict.kept]
    else:
        message.pop("tool_calls", None)
        message["content"] = content_text(message.get("content")) + verdict.notice
        if choices[0].get("finish_reason") == "tool_calls":
            choices[0]["finish_reason"] = "stop"
    return out


def _has_content(delta: Any) -> bool:
    if not isinstance(delta, dict):
        return False
    return (
        any(v not in (None, "", [], {}) for k, v in delta.items() if k != "role") or "role" in delta
    )


class ChatFormat(WireFormat):
    name = "chat"
    title = "chat completions"
    joins_text = True

    def is_request(self, body: Any) -> bool:
        return isinstance(body, dict) and isinstance(body.get("messages"), list)

    def messages(self, body: JsonDict) -> list[JsonDict]:
        return [m for m in body.get("messages") or () if isinstance(m, dict)]

    def tools(self, body: JsonDict) -> list[Tool]:
        out = []
        definitions = body.get("tools")
        for definition in definitions if isinstance(definitions, list) else ():
            function = definition.get("function") if isinstance(definition, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                schema = function.get("parameters")
                out.append(
                    Tool(
                        function["name"],
                        str(function.get("description") or ""),
                        schema if isinstance(schema, dict) else None,
                    )
                )
        return out

    def system(self, body: JsonDict) -> str:
        return "\n\n".join(
            content_text(m.get("content"))
            for m in self.messages(body)
            if m.get("role") in ("system", "developer")
        )

    def read_event(self, event: SSEEvent) -> WireEvent:
        return read_event(event)

    def reader(self, builder: StreamBuilder, body: JsonDict) -> ChunkReader:
        return ChunkReader(builder)

    def without_unjudged(self, body: JsonDict) -> tuple[JsonDict, bool]:
        return without_unjudged(body)

    def release_stream(
        self, held: Sequence[WireEvent], verdict: Verdict, sent: dict[str, SentCall]
    ) -> StreamRelease:
        return release_stream(held, verdict, sent)

    def release_whole(self, body: JsonDict, verdict: Verdict) -> JsonDict:
        return release_completion(body, verdict)

    def restore_removed(
        self, body: JsonDict, repairs: Sequence[Repair], messages: Sequence[JsonDict] = ()
    ) -> tuple[JsonDict, list[str]]:
        return restore_removed(body, repairs)

    @property
    def repairs(self) -> bool:
        return True

    def hidden_entries(
        self,
        message: AssistantMessage,
        removed: Sequence[RemovedCall],
        body: JsonDict | None,
        held: Sequence[WireEvent] | None,
    ) -> list[JsonDict] | None:
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.raw_arguments or ""},
            }
            for c in message.tool_calls
        ]
        reply: JsonDict = {"role": "assistant", "content": message.text or None}
        answers = [{"role": "tool", "tool_call_id": c.id, "content": c.result} for c in removed]
        return [{**reply, "tool_calls": calls}, *answers]

    def join_whole(self, first: JsonDict, body: JsonDict) -> JsonDict:
        out = copy.deepcopy(body)
        choices = out.get("choices")
        earlier = first.get("choices")
        if not (isinstance(choices, list) and choices and isinstance(earlier, list) and earlier):
            return out
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        head = earlier[0].get("message") if isinstance(earlier[0], dict) else None
        if isinstance(message, dict) and isinstance(head, dict):
            text = content_text(head.get("content")) + content_text(message.get("content"))
            message["content"] = text or None
        return out


CHAT = ChatFormat()
