"""Reading an OpenAI Responses reply (streamed events or a whole response) into stream
events, and what a call item is (see `workbench.proxy.formats.responses`)."""

from __future__ import annotations

import json
from typing import Any

from workbench.agent.types import Usage
from workbench.providers.openai_stream import StreamError, error_text
from workbench.providers.stream_builder import Events, StreamBuilder
from workbench.proxy.formats.base import ReaderBase
from workbench.proxy.wire import JsonDict, ReleasedCall, content_text

CALL_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "computer_call",
    }
)
"""Output items the client runs."""
OUTPUT_TYPES = frozenset(t + "_output" for t in CALL_TYPES)
CALL_EVENTS = frozenset(
    {
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
    }
)
END_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_META = ("type", "id", "call_id", "status", "name")


def call_name(item: JsonDict) -> str:
    return str(item.get("name") or item.get("type") or "")


def call_arguments(item: JsonDict) -> str:
    """The call's arguments as the text the gate parses."""
    kind = item.get("type")
    if kind == "function_call":
        value = item.get("arguments")
        return value if isinstance(value, str) else json.dumps(value or {})
    if kind == "custom_tool_call":
        return json.dumps({"input": str(item.get("input") or "")}, ensure_ascii=False)
    return json.dumps({k: v for k, v in item.items() if k not in _META}, ensure_ascii=False)


def with_arguments(item: JsonDict, call: ReleasedCall) -> JsonDict:
    """The item carrying the arguments the gate released."""
    kind = item.get("type")
    if kind == "function_call":
        return {**item, "arguments": call.wire_arguments}
    if kind == "custom_tool_call":
        return {**item, "input": str(call.arguments.get("input", ""))}
    return {**{k: v for k, v in item.items() if k in _META}, **call.arguments}


def is_call(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") in CALL_TYPES


def upstream_ran(item: Any) -> bool:
    """An output item that is neither text, nor reasoning, nor a call the client runs: a
    tool the upstream ran itself (`web_search_call`, `file_search_call`, `mcp_call`, ...)."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("type"), str)
        and item["type"] not in ("message", "reasoning")
        and not is_call(item)
    )


def upstream_line(item: JsonDict) -> str:
    """What the timeline says of an item the upstream ran."""
    action = item.get("action")
    query = action.get("query") if isinstance(action, dict) else None
    if not isinstance(query, str):
        query = item.get("query") if isinstance(item.get("query"), str) else None
    detail = (
        f"query {query!r}"
        if query is not None
        else json.dumps(
            {k: v for k, v in item.items() if k not in ("type", "id", "status")},
            ensure_ascii=False,
        )[:300]
    )
    status = f" ({item['status']})" if isinstance(item.get("status"), str) else ""
    return f"upstream ran {item['type']}{status}: {detail} (passed to the agent as it is)"


class ResponsesReader(ReaderBase):
    END_EVENT = "response.completed"
    LENGTH_REASON = "incomplete"

    def __init__(self, builder: StreamBuilder) -> None:
        super().__init__(builder)
        self._ids: dict[str, int] = {}
        """call_id -> output_index."""
        self._custom: dict[int, str] = {}
        """Custom calls' input so far (judged as one JSON object once whole)."""
        self.response_id: str | None = None
        """The response's id, as the upstream gave it."""
        self.upstream_items: list[JsonDict] = []
        """The output items the upstream ran itself (see `upstream_ran`)."""

    def feed_data(self, data: str, event: str | None = None) -> Events:
        raise StreamError(f"Malformed event from the server (not JSON): {data[:300]}")

    def feed_parsed(self, chunk: Any, data: str, event: str | None = None) -> Events:
        if not isinstance(chunk, dict):
            raise StreamError(f"Malformed event from the server (not an object): {data[:300]}")
        self.chunk_count += 1
        kind = chunk.get("type") or event
        if kind == "error" or kind == "response.failed":
            raise StreamError(f"The server reported an error mid-stream: {error_text(chunk)}")
        events: Events = []
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            events = self.builder.text(str(chunk.get("delta") or ""))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            events = self.builder.thinking(str(chunk.get("delta") or ""))
        elif kind == "response.output_item.added" and is_call(chunk.get("item")):
            events = self._begin(chunk.get("output_index"), chunk["item"], whole=False)
        elif kind == "response.function_call_arguments.delta":
            index = self._index(chunk)
            events = self.builder.tool_call_delta(index, str(chunk.get("delta") or ""))
        elif kind == "response.custom_tool_call_input.delta":
            self._index(chunk)  # raises unless output_index is a call's, an int
            output_index: int = chunk["output_index"]
            self._custom[output_index] = self._custom.get(output_index, "") + str(
                chunk.get("delta") or ""
            )
        elif kind == "response.output_item.done" and is_call(chunk.get("item")):
            events = self._settle(chunk.get("output_index"), chunk["item"])
        elif kind in ("response.completed", "response.incomplete"):
            events = self._end(chunk.get("response"))
            self.saw_done = True
        elif kind in ("response.created", "response.in_progress"):
            response = chunk.get("response")
            if isinstance(response, dict) and isinstance(response.get("model"), str):
                self.server_model = response["model"]
        if events:
            self.first_content = True
        return events

    def feed(self, whole: JsonDict) -> Events:
        if isinstance(whole.get("model"), str):
            self.server_model = whole["model"]
        events: Events = []
        for index, item in enumerate(whole.get("output") or ()):
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message":
                events += self.builder.text(content_text(item.get("content")))
            elif is_call(item):
                events += self._begin(index, item, whole=True)
        events += self._end(whole)
        self.saw_done = True
        return events

    # -- calls -------------------------------------------------------------------------

    def _begin(self, output_index: Any, item: JsonDict, *, whole: bool) -> Events:
        if not isinstance(output_index, int) or output_index in self._calls:
            raise StreamError(f"A call at output index {output_index!r} came twice or without one")
        call_id = str(item.get("call_id") or "")
        if not call_id or call_id in self._ids:
            raise StreamError(f"A call without a call_id, or with one already used: {call_id!r}")
        content, events = self.builder.begin_tool_call(call_id, call_name(item))
        self._calls[output_index] = content
        self._ids[call_id] = output_index
        if whole or item.get("type") not in ("function_call", "custom_tool_call"):
            events += self.builder.tool_call_delta(content, call_arguments(item))
        elif item.get("type") == "function_call" and item.get("arguments"):
            events += self.builder.tool_call_delta(content, str(item["arguments"]))
        return events

    def _index(self, chunk: JsonDict) -> int:
        index = chunk.get("output_index")
        if not isinstance(index, int) or index not in self._calls:
            raise StreamError(f"Arguments for output index {index!r} came before its call")
        return self._calls[index]

    def _settle(self, output_index: Any, item: JsonDict) -> Events:
        """A call's done item must be the call its pieces made."""
        if output_index not in self._calls:
            return self._begin(output_index, item, whole=True)
        content = self._calls[output_index]
        events: Events = []
        if item.get("type") == "custom_tool_call" and not self._raw(content):
            pieces = self._custom.pop(output_index, None)
            text = item.get("input")
            if pieces is not None and text is not None and pieces != text:
                raise StreamError(f"The custom call {item.get('call_id')!r} changed at its end")
            events = self.builder.tool_call_delta(
                content, json.dumps({"input": str(text or pieces or "")}, ensure_ascii=False)
            )
        self._check(content, item)
        return events

    def _raw(self, content: int) -> str:
        return getattr(self.builder.message.content[content], "raw_arguments", "") or ""

    def _check(self, content: int, item: JsonDict) -> None:
        block = self.builder.message.content[content]
        got = (getattr(block, "id", ""), getattr(block, "name", ""), self._raw(content))
        if got != (item.get("call_id"), call_name(item), call_arguments(item)):
            raise StreamError(
                f"The upstream changed the call {item.get('call_id')!r} between its pieces and "
                "its end: the stream was cut so the client runs nothing unjudged"
            )

    def _end(self, response: Any) -> Events:
        if not isinstance(response, dict):
            return []
        self.response_id = response.get("id") if isinstance(response.get("id"), str) else None
        output = response.get("output")
        self.upstream_items = [i for i in output or () if upstream_ran(i)]
        self.finish_reason = str(response.get("status") or "completed")
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        events: Events = []
        for index, item in enumerate(output if isinstance(output, list) else ()):
            if not is_call(item):
                continue
            known = self._ids.get(str(item.get("call_id") or ""))
            if known is None:
                events += self._begin(max(self._calls, default=-1) + 1 + index, item, whole=True)
            else:
                events += self._settle(known, item)
        return events


def _usage(raw: JsonDict) -> Usage:
    prompt = raw.get("input_tokens")
    prompt = prompt if isinstance(prompt, int) else 0
    output = raw.get("output_tokens")
    output = output if isinstance(output, int) else 0
    details = raw.get("input_tokens_details")
    cached = details.get("cached_tokens", 0) if isinstance(details, dict) else 0
    cached = cached if isinstance(cached, int) else 0
    return Usage(
        input=max(prompt - cached, 0),
        output=output,
        cache_read=cached,
        total_tokens=prompt + output,
    )
