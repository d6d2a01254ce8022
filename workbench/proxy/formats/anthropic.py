"""Anthropic Messages (`POST /v1/messages`, `?beta=true` too) on the wire.

A request's messages become the core's: an assistant message's text and `tool_use`
blocks one assistant message, a user message's `tool_result` blocks one `tool`
message each, then its text. `system` may be a string or a list of blocks.

Calls are `tool_use` blocks (the client runs them); `server_tool_use` and its
results run at the upstream and are passed. A call's input is what the client's
SDK assembles: the concatenated `input_json_delta` pieces, or the start block's
`input` when there are none.

Release: the SDKs index content blocks by their position, so a removed call's
events are dropped and every later block's `index` moves down; an edited call's
pieces become one piece with the edited input; a reply left with no call gets a
text block saying why, and its `stop_reason` becomes `end_turn`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from workbench.agent import AssistantMessage
from workbench.agent.types import Usage
from workbench.providers.openai_stream import StreamError, error_text
from workbench.providers.stream_builder import Events, StreamBuilder
from workbench.proxy.formats.base import (
    ReaderBase,
    SentCall,
    Splice,
    StreamRelease,
    Tool,
    WireEvent,
    WireFormat,
)
from workbench.proxy.formats.repair import AT, restore_anthropic
from workbench.proxy.wire import JsonDict, RemovedCall, Repair, Verdict, content_text
from workbench.sse import SSEEvent, sse_event

CALL_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})


def _blocks(content: Any) -> list[JsonDict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


class AnthropicFormat(WireFormat):
    name = "anthropic"
    title = "Anthropic Messages"
    auth = "x-api-key"

    def is_request(self, body: Any) -> bool:
        return isinstance(body, dict) and isinstance(body.get("messages"), list)

    def messages(self, body: JsonDict) -> list[JsonDict]:
        out: list[JsonDict] = []
        for at, message in enumerate(body.get("messages") or ()):
            if not isinstance(message, dict):
                continue
            blocks = _blocks(message.get("content"))
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            if message.get("role") == "assistant":
                calls = [
                    {
                        "id": b.get("id"),
                        "type": "function",
                        "function": {
                            "name": b.get("name"),
                            "arguments": json.dumps(b.get("input"), ensure_ascii=False),
                        },
                    }
                    for b in blocks
                    if b.get("type") == "tool_use"
                ]
                out.append({"role": "assistant", "content": text, "tool_calls": calls, AT: at})
                continue
            for block in blocks:
                if block.get("type") == "tool_result":
                    result = block.get("content")
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": block.get("tool_use_id"),
                            "content": result if isinstance(result, str) else content_text(result),
                        }
                    )
            if text or not any(b.get("type") == "tool_result" for b in blocks):
                out.append({"role": message.get("role"), "content": text})
        return out

    def tools(self, body: JsonDict) -> list[Tool]:
        out = []
        for tool in body.get("tools") or ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                schema = tool.get("input_schema")
                out.append(
                    Tool(
                        tool["name"],
                        str(tool.get("description") or ""),
                        schema if isinstance(schema, dict) else None,
                    )
                )
        return out

    def system(self, body: JsonDict) -> str:
        return content_text(_blocks(body.get("system")))

    def read_event(self, event: SSEEvent) -> WireEvent:
        chunk = event.json()
        kind = (chunk.get("type") if isinstance(chunk, dict) else None) or event.name
        calls = kind in CALL_EVENTS or kind == "message_delta"
        return WireEvent(event, chunk, event.raw, done=kind == "message_stop", calls=calls)

    def reader(self, builder: StreamBuilder, body: JsonDict) -> AnthropicReader:
        return AnthropicReader(builder)

    def release_stream(
        self, held: Sequence[WireEvent], verdict: Verdict, sent: dict[str, SentCall]
    ) -> StreamRelease:
        kept = {c.id: c for c in verdict.kept}
        removed = {c.id for c in verdict.removed}
        for streamed in sent:
            if streamed in removed or streamed not in kept or not kept[streamed].untouched:
                return StreamRelease(refused=f"{streamed} was streamed, then denied or edited")
        ids: dict[int, str | None] = {s.wire_index: i for i, s in sent.items()}
        gone: list[int] = []
        top = max(ids, default=-1)
        out: list[bytes] = []
        notice = verdict.notice if not verdict.kept and verdict.removed else ""
        for item in held:
            chunk = item.chunk
            if not isinstance(chunk, dict):
                out.append(item.raw)
                continue
            kind = chunk.get("type")
            index = chunk.get("index")
            if kind == "content_block_start" and isinstance(index, int):
                block = chunk.get("content_block") or {}
                if block.get("type") == "tool_use":
                    ids[index] = block.get("id")
                    if block.get("id") in removed:
                        gone.append(index)
                top = max(top, index)
            if not isinstance(index, int) or kind not in CALL_EVENTS:
                if verdict.continued and kind in ("message_delta", "message_stop"):
                    continue  # the continuation ends the reply
                if kind == "message_delta" and notice:
                    out += _notice_events(top + 1 - len(gone), notice)
                    delta = {**(chunk.get("delta") or {}), "stop_reason": "end_turn"}
                    out.append(sse_event({**chunk, "delta": delta}, item.event.name))
                else:
                    out.append(item.raw)
                continue
            call_id = ids.get(index)
            if call_id in removed:
                continue
            moved = {**chunk, "index": index - sum(1 for g in gone if g < index)}
            call = kept.get(call_id or "")
            if call is not None and not call.untouched:
                delta = chunk.get("delta") or {}
                if kind == "content_block_delta" and delta.get("type") == "input_json_delta":
                    continue
                if kind == "content_block_start":
                    moved["content_block"] = {**chunk["content_block"], "input": {}}
                if kind == "content_block_stop":
                    piece = {
                        "type": "content_block_delta",
                        "index": moved["index"],
                        "delta": {"type": "input_json_delta", "partial_json": call.wire_arguments},
                    }
                    out.append(sse_event(piece, "content_block_delta"))
            if moved["index"] == index and (call is None or call.untouched):
                out.append(item.raw)
            else:
                out.append(sse_event(moved, item.event.name))
        if verdict.continued:
            given = top + 1 - len(gone)
            return StreamRelease(out, splice=Splice(given), visible=given)
        return StreamRelease(out)

    def restore_removed(
        self, body: JsonDict, repairs: Sequence[Repair], messages: Sequence[JsonDict] = ()
    ) -> tuple[JsonDict, list[str]]:
        return restore_anthropic(body, messages, repairs)

    @property
    def repairs(self) -> bool:
        return True

    splices = True

    def hidden_entries(
        self,
        message: AssistantMessage,
        removed: Sequence[RemovedCall],
        body: JsonDict | None,
        held: Sequence[WireEvent] | None,
    ) -> list[JsonDict] | None:
        if body is not None:
            blocks = _blocks(body.get("content"))
        else:
            blocks = [{"type": "text", "text": message.text}] if message.text else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": _object(c.raw_arguments or ""),
                }
                for c in message.tool_calls
            ]
        answers = [
            {"type": "tool_result", "tool_use_id": c.id, "content": c.result, "is_error": True}
            for c in removed
        ]
        return [{"role": "assistant", "content": blocks}, {"role": "user", "content": answers}]

    def splice_event(self, chunk: JsonDict, splice: Splice) -> JsonDict | None:
        kind = chunk.get("type")
        if kind == "message_start":
            return None  # the agent's SDK has its message already
        index = chunk.get("index")
        if kind in CALL_EVENTS and isinstance(index, int):
            return {**chunk, "index": index + splice.offset}
        return chunk

    def join_whole(self, first: JsonDict, body: JsonDict) -> JsonDict:
        content = [*_blocks(first.get("content")), *_blocks(body.get("content"))]
        return {**body, "id": first.get("id") or body.get("id"), "content": content}

    def pieces(self, body: JsonDict) -> int:
        return len(_blocks(body.get("content")))

    def release_whole(self, body: JsonDict, verdict: Verdict) -> JsonDict:
        out = copy.deepcopy(body)
        kept = {c.id: c for c in verdict.kept}
        content = []
        for block in _blocks(out.get("content")):
            if block.get("type") == "tool_use":
                call = kept.get(block.get("id") or "")
                if call is None:
                    continue
                if not call.untouched:
                    block = {**block, "input": call.arguments}
            content.append(block)
        if not verdict.kept and verdict.removed and not verdict.continued:
            content.append({"type": "text", "text": verdict.notice.lstrip("\n")})
            if out.get("stop_reason") == "tool_use":
                out["stop_reason"] = "end_turn"
        out["content"] = content
        return out


def _object(arguments: str) -> Any:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _notice_events(index: int, text: str) -> list[bytes]:
    events = [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text.lstrip("\n")},
        },
        {"type": "content_block_stop", "index": index},
    ]
    return [sse_event(e, str(e["type"])) for e in events]


class AnthropicReader(ReaderBase):
    END_EVENT = "message_stop"
    LENGTH_REASON = "max_tokens"

    def __init__(self, builder: StreamBuilder) -> None:
        super().__init__(builder)
        self._start_input: dict[int, Any] = {}
        self._pieces: dict[int, str] = {}
        self._input_tokens = 0

    def feed_data(self, data: str, event: str | None = None) -> Events:
        raise StreamError(f"Malformed event from the server (not JSON): {data[:300]}")

    def feed_parsed(self, chunk: Any, data: str, event: str | None = None) -> Events:
        if not isinstance(chunk, dict):
            raise StreamError(f"Malformed event from the server (not an object): {data[:300]}")
        self.chunk_count += 1
        kind = chunk.get("type") or event
        if kind == "error":
            raise StreamError(f"The server reported an error mid-stream: {error_text(chunk)}")
        events: Events = []
        index = chunk.get("index")
        if kind == "message_start":
            message = chunk.get("message") or {}
            self.server_model = message.get("model") or self.server_model
            self._usage(message.get("usage"))
        elif kind == "content_block_start" and isinstance(index, int):
            block = chunk.get("content_block") or {}
            if block.get("type") == "tool_use":
                events = self._begin(index, block)
            elif block.get("type") == "text" and block.get("text"):
                events = self.builder.text(str(block["text"]))
        elif kind == "content_block_delta" and isinstance(index, int):
            delta = chunk.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                events = self.builder.text(str(delta.get("text") or ""))
            elif dtype == "thinking_delta":
                events = self.builder.thinking(str(delta.get("thinking") or ""))
            elif dtype == "input_json_delta" and index in self._calls:
                piece = str(delta.get("partial_json") or "")
                self._pieces[index] = self._pieces.get(index, "") + piece
                events = self.builder.tool_call_delta(self._calls[index], piece) if piece else []
        elif kind == "content_block_stop" and index in self._calls:
            if not self._pieces.get(index):  # no pieces: the SDKs keep the start's input
                start = self._start_input.get(index)
                text = json.dumps(start if start is not None else {}, ensure_ascii=False)
                events = self.builder.tool_call_delta(self._calls[index], text)
        elif kind == "message_delta":
            delta = chunk.get("delta") or {}
            if isinstance(delta.get("stop_reason"), str):
                self.finish_reason = delta["stop_reason"]
            self._usage(chunk.get("usage"))
        elif kind == "message_stop":
            self.saw_done = True
        if events:
            self.first_content = True
        return events

    def feed(self, whole: JsonDict) -> Events:
        self.server_model = whole.get("model") or self.server_model
        events: Events = []
        for index, block in enumerate(_blocks(whole.get("content"))):
            if block.get("type") == "text":
                events += self.builder.text(str(block.get("text") or ""))
            elif block.get("type") == "thinking":
                events += self.builder.thinking(str(block.get("thinking") or ""))
            elif block.get("type") == "tool_use":
                events += self._begin(index, block)
                text = json.dumps(block.get("input") or {}, ensure_ascii=False)
                events += self.builder.tool_call_delta(self._calls[index], text)
        self.finish_reason = whole.get("stop_reason")
        self._usage(whole.get("usage"))
        self.saw_done = True
        return events

    def _begin(self, index: int, block: JsonDict) -> Events:
        if index in self._calls:
            raise StreamError(f"Two content blocks at index {index}")
        content, events = self.builder.begin_tool_call(
            str(block.get("id") or ""), str(block.get("name") or "")
        )
        self._calls[index] = content
        self._start_input[index] = block.get("input")
        return events

    def _usage(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            return
        if isinstance(raw.get("input_tokens"), int):
            self._input_tokens = raw["input_tokens"]
        cached = raw.get("cache_read_input_tokens")
        cached = cached if isinstance(cached, int) else 0
        output = raw.get("output_tokens")
        output = output if isinstance(output, int) else 0
        self.usage = Usage(
            input=self._input_tokens,
            output=output,
            cache_read=cached,
            total_tokens=self._input_tokens + cached + output,
        )


ANTHROPIC = AnthropicFormat()
