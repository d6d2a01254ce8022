"""From a chat-completions SSE stream to AssistantMessageEvents: no I/O here.

Servers differ in the details, so the reader is lenient where that is safe:

- reasoning arrives as `reasoning_content` (DeepSeek, llama.cpp, older vLLM) or
  `reasoning` (Ollama, newer vLLM, OpenRouter); the first non-empty one is thinking.
- tool-call deltas are keyed by `index`; the first delta of a call brings its id
  and name, later ones bring argument pieces, and calls may interleave. A missing
  index falls back to the call with the same id, or the last call; a new id on an
  index already in use starts a new call (some servers reuse index 0). A missing id
  is generated. Arguments sent as a JSON object instead of a string are serialized.
- usage is taken from whichever chunk carries it (the last one wins), and a stream
  without usage is fine.
- a stream ends well at `[DONE]`, or when the body ends after a finish reason. A body
  that ends with neither was cut off: that is an error, with the content kept. A body
  with no data at all is an empty response (llama.cpp sends one for requests it
  cannot serve), said as such.
- text between `<think>` and `</think>` at the start of `content` (Qwen and
  DeepSeek-R1 on servers without a reasoning parser) is thinking, even when a tag
  is split across chunks (`ThinkSplitter`).

Things that cannot be repaired raise `StreamError` with a readable message; the
provider turns it into the final error event.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from workbench.agent.types import StopReason, ToolCall, Usage
from workbench.json_text import LINE_DEPTH, loads
from workbench.providers.stream_builder import Events, StreamBuilder

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


EMPTY_RESPONSE = (
    "Empty response: the server answered but sent no data at all. llama.cpp's server "
    "does this when it cannot serve the request, for instance a tool_choice value it "
    "does not support or image parts for a model without vision"
)
EMPTY_STREAM = (
    "Empty response: the server's stream ended ([DONE]) without a single chunk: no text, "
    "no tool call, no finish reason"
)


class StreamError(Exception):
    """The stream cannot go on; `str(self)` is the message for the user."""


class ThinkSplitter:
    """Splits `content` deltas into thinking and text at `<think>` ... `</think>`.

    Only a `<think>` before any other text opens a thinking block (a model that
    writes the tag later in its answer is talking about it). A tag may arrive cut
    across deltas, so a tail that could be the start of one is held back until the
    next delta (or `flush`) says what it is.
    """

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.thinking = False
        self.seen_text = False
        self.closed = False
        """A thinking block has ended (only the first one is split out)."""
        self._pending = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """(kind, text) pieces, kind "thinking" or "text", in order."""
        buf, self._pending = self._pending + text, ""
        out: list[tuple[str, str]] = []
        while buf:
            tag = self.CLOSE if self.thinking else self.OPEN
            if not self.thinking and (self.seen_text or self.closed):
                if not self.seen_text:  # the blank lines after </think>
                    buf = buf.lstrip()
                self._add(out, "text", buf)
                break
            if not self.thinking:
                stripped = buf.lstrip()
                if stripped.startswith(tag):
                    self.thinking = True
                    buf = stripped[len(tag) :]
                    continue
                if tag.startswith(stripped):  # maybe the start of the tag
                    self._pending = buf
                    break
                self._add(out, "text", buf)
                break
            at = buf.find(tag)
            if at >= 0:
                self._add(out, "thinking", buf[:at])
                self.thinking, self.closed = False, True
                buf = buf[at + len(tag) :]
                continue
            keep = _partial_suffix(buf, tag)
            self._add(out, "thinking", buf[: len(buf) - keep])
            self._pending = buf[len(buf) - keep :]
            break
        return out

    def flush(self) -> list[tuple[str, str]]:
        """Whatever was held back, once the stream has ended."""
        out: list[tuple[str, str]] = []
        pending, self._pending = self._pending, ""
        self._add(out, "thinking" if self.thinking else "text", pending)
        return out

    def _add(self, out: list[tuple[str, str]], kind: str, text: str) -> None:
        if text:
            out.append((kind, text))
            if kind == "text" and text.strip():
                self.seen_text = True


def _partial_suffix(text: str, tag: str) -> int:
    """The length of the longest end of `text` that is a beginning of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


# -- chunks --------------------------------------------------------------------------

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "tool_use": "toolUse",
    "length": "length",
    "max_tokens": "length",
}
_FAILED_REASONS = {
    "content_filter": "The response was stopped by the server's content filter "
    "(finish_reason=content_filter)",
}


@dataclass
class _Call:
    content_index: int
    tool_call_id: str


class ChunkReader:
    """Feeds decoded chunks into a `StreamBuilder` and remembers what the wire said."""

    def __init__(self, builder: StreamBuilder) -> None:
        self.builder = builder
        self.finish_reason: str | None = None
        """The server's own finish reason (the last one seen)."""
        self.usage: Usage | None = None
        self.server_model: str | None = None
        self.saw_done = False
        self.chunk_count = 0
        self.first_content = False
        """Set by `feed` the first time a chunk carried content (for time to first token)."""
        self._calls: dict[int, _Call] = {}
        self._last_index: int | None = None
        self._think = ThinkSplitter()

    # -- input -------------------------------------------------------------------

    def feed_data(self, data: str, event: str | None = None) -> Events:
        """One SSE event's data: `[DONE]`, a chunk, or an error object."""
        if data.strip() == "[DONE]":
            self.saw_done = True
            return []
        try:
            chunk = loads(data, LINE_DEPTH)
        except ValueError as exc:
            raise StreamError(
                f"Malformed chunk from the server (invalid JSON: {exc}): {_clip(data)}"
            ) from None
        return self.feed_parsed(chunk, data, event)

    def feed_parsed(self, chunk: Any, data: str, event: str | None = None) -> Events:
        """One SSE event's data already parsed as JSON (`data` is its text, for messages)."""
        if event == "error" or (isinstance(chunk, dict) and chunk.get("error")):
            raise StreamError(f"The server reported an error mid-stream: {error_text(chunk)}")
        if not isinstance(chunk, dict):
            raise StreamError(f"Malformed chunk from the server (not an object): {_clip(data)}")
        return self.feed(chunk)

    def feed(self, chunk: dict[str, Any]) -> Events:
        """One decoded `chat.completion.chunk` (or a whole non-streamed `chat.completion`)."""
        self.chunk_count += 1
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.server_model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage_from(chunk["usage"])
        events: Events = []
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return events
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue  # n > 1: only the first choice is kept
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                delta = choice.get("message")  # a non-streamed reply
            if isinstance(delta, dict):
                events += self._delta(delta)
            if isinstance(choice.get("finish_reason"), str):
                self.finish_reason = choice["finish_reason"]
        if events:
            self.first_content = True
        return events

    def _delta(self, delta: dict[str, Any]) -> Events:
        events: Events = []
        for name in REASONING_FIELDS:
            value = delta.get(name)
            if isinstance(value, str) and value:
                events += self.builder.thinking(value)
                break
        value = delta.get("content")
        if isinstance(value, str) and value:
            events += self._pieces(self._think.feed(value))
        value = delta.get("refusal")
        if isinstance(value, str) and value:
            events += self.builder.text(value)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    events += self._tool_call(call, position)
        return events

    def _pieces(self, pieces: list[tuple[str, str]]) -> Events:
        events: Events = []
        for kind, text in pieces:
            events += self.builder.thinking(text) if kind == "thinking" else self.builder.text(text)
        return events

    def _tool_call(self, delta: dict[str, Any], position: int) -> Events:
        function = delta.get("function")
        if not isinstance(function, dict):
            function = {}
        call_id = _str(delta.get("id"))
        name = _str(function.get("name"))
        arguments = function.get("arguments")
        index = self._index_of(delta.get("index"), call_id, position)
        events: Events = []
        call = self._calls.get(index)
        if call is None or (call_id and call.tool_call_id and call_id != call.tool_call_id):
            content_index, events = self.builder.begin_tool_call(
                call_id or f"call_{uuid.uuid4().hex[:12]}", name
            )
            call = self._calls[index] = _Call(content_index, call_id)
        else:
            current = self.builder.message.content[call.content_index]
            assert isinstance(current, ToolCall)
            if call_id and not call.tool_call_id:
                call.tool_call_id = current.id = call_id  # the id came late
            if name and name != current.name:
                self.builder.tool_call_name(call.content_index, name)
        self._last_index = index
        if isinstance(arguments, (dict, list)):
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            events += self.builder.tool_call_delta(call.content_index, arguments)
        return events

    def wire_index(self, content_index: int) -> int | None:
        """The `index` the server gave the call at `content_index` (None: not a call)."""
        for wire, call in self._calls.items():
            if call.content_index == content_index:
                return wire
        return None

    def _index_of(self, index: Any, call_id: str, position: int) -> int:
        """The call a delta belongs to, when the server left out `index`."""
        if isinstance(index, int):
            return index
        if call_id:
            for known, call in self._calls.items():
                if call.tool_call_id == call_id:
                    return known
            last = self._last_index
            if last is not None and not self._calls[last].tool_call_id:
                return last  # the id came late
            return max(self._calls, default=-1) + 1
        return self._last_index if self._last_index is not None else position

    # -- the end -----------------------------------------------------------------

    def finish(self) -> Events:
        """The final events once the body has ended (cleanly, as far as HTTP goes)."""
        if not self.saw_done and self.finish_reason is None and self.chunk_count == 0:
            raise StreamError(EMPTY_RESPONSE)
        if self.chunk_count == 0 and self.finish_reason is None:
            raise StreamError(EMPTY_STREAM)
        if not self.saw_done and self.finish_reason is None:
            raise StreamError(
                f"The stream ended early: no finish reason and no [DONE] after "
                f"{self.chunk_count} chunk(s) (the connection may have been cut)"
            )
        return self.held() + self._finish(self.finish_reason)

    def held(self) -> Events:
        """Text held back in case it began a `<think>` tag (call once the body has ended)."""
        return self._pieces(self._think.flush())

    def _finish(self, reason: str | None) -> Events:
        if reason in _FAILED_REASONS:
            return self.builder.error(_FAILED_REASONS[reason], usage=self.usage)
        stop = _STOP_REASONS.get(reason or "")
        if reason is not None and stop is None and reason in ("abort", "error"):
            return self.builder.error(
                f"The server ended the response with finish_reason={reason!r}", usage=self.usage
            )
        if stop == "stop" and self.builder.message.tool_calls:
            stop = "toolUse"  # Ollama and others say "stop" after tool calls
        return self.builder.done(stop, self.usage)


def usage_from(raw: dict[str, Any]) -> Usage:
    """OpenAI usage to ours: cached prompt tokens count as cache reads, not input."""
    prompt = _int(raw.get("prompt_tokens"))
    output = _int(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    cached = cached or _int(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    total = _int(raw.get("total_tokens")) or prompt + output
    return Usage(
        input=max(prompt - cached, 0), output=output, cache_read=cached, total_tokens=total
    )


def error_text(body: Any) -> str:
    """The server's own message from an error body, whatever its shape.

    OpenAI and llama.cpp: {"error": {"message": ...}}; Ollama and LM Studio:
    {"error": "..."}; vLLM: {"object": "error", "message": ...}; FastAPI: {"detail": ...}.
    """
    if isinstance(body, dict):
        for key in ("error", "message", "detail", "msg"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, (dict, list)) and value:
                return error_text(value)
        return _clip(json.dumps(body, ensure_ascii=False))
    if isinstance(body, list) and body:
        return error_text(body[0])
    if isinstance(body, str):
        return _clip(body.strip()) or "(empty body)"
    return _clip(json.dumps(body, ensure_ascii=False, default=str))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
