"""Gemini (`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`).

The model is in the path. A request's `contents` become the core's messages: a
`model` turn's text and `functionCall` parts one assistant message, a turn's
`functionResponse` parts one `tool` message each, then its text. Calls come whole
(one part each, `args` an object), in any chunk. A call is named by its place,
`NAME#TURN.K` (the K-th call of that name in the TURN-th model turn), whether or not
the upstream gave it an `id`: a client makes up its own id for a call that came
without one (Gemini CLI does), so only the place is the same in the reply and in the
client's next request. An answer is matched to its call by the call's `id` when the
client repeats it, else by its place among the answers of that name.

Release: a removed call's part is dropped, an edited call's `args` replaced, and a
reply left with no call gets a text part saying why. Calls in any candidate but the
first (which the proxy does not read) are dropped before anything is sent.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from typing import Any

from workbench.agent import AssistantMessage
from workbench.agent.types import Usage
from workbench.providers.openai_stream import StreamError, error_text
from workbench.providers.stream_builder import Events, StreamBuilder
from workbench.proxy.formats.base import (
    ReaderBase,
    SentCall,
    StreamRelease,
    Tool,
    WireEvent,
    WireFormat,
)
from workbench.proxy.formats.repair import AT, restore_gemini
from workbench.proxy.wire import JsonDict, RemovedCall, Repair, Verdict
from workbench.sse import SSEEvent, sse_event

PATH = re.compile(r"^/v1(?:beta|alpha)?\d*/models/(?P<model>[^/:]+):(?P<verb>\w+)$")
VERBS = frozenset({"generateContent", "streamGenerateContent"})


def _parts(content: Any) -> list[JsonDict]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _given_id(part: JsonDict) -> str | None:
    body = part.get("functionCall") or part.get("functionResponse") or {}
    given = body.get("id")
    return given if isinstance(given, str) and given else None


def _text(parts: list[JsonDict]) -> str:
    return "".join(
        str(p["text"]) for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
    )


class _Namer:
    """Names of calls by their place (see the module's docstring)."""

    def __init__(self, turn: int) -> None:
        self.turn = turn
        self.seen: dict[str, int] = {}

    def __call__(self, part: JsonDict) -> str:
        body = part.get("functionCall") or part.get("functionResponse") or {}
        name = str(body.get("name") or "")
        k = self.seen.get(name, 0)
        self.seen[name] = k + 1
        return f"{name}#{self.turn}.{k}"


class GeminiFormat(WireFormat):
    name = "gemini"
    title = "Gemini generateContent"
    joins_text = True
    auth = "x-goog-api-key"

    def is_request(self, body: Any) -> bool:
        return isinstance(body, dict) and isinstance(body.get("contents"), list)

    def messages(self, body: JsonDict) -> list[JsonDict]:
        out: list[JsonDict] = []
        turn = 0
        placed: dict[str, str] = {}
        """The place name of each call of the last model turn, by the id the client gave it."""
        for at, content in enumerate(body.get("contents") or ()):
            parts = _parts(content)
            if isinstance(content, dict) and content.get("role") == "model":
                name = _Namer(turn)
                turn += 1
                placed = {}
                calls = []
                for p in parts:
                    if not isinstance(p.get("functionCall"), dict):
                        continue
                    call_id = name(p)
                    given = _given_id(p)
                    if given is not None:
                        placed.setdefault(given, call_id)
                    arguments = json.dumps(p["functionCall"].get("args") or {}, ensure_ascii=False)
                    calls.append(
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": p["functionCall"].get("name"),
                                "arguments": arguments,
                            },
                        }
                    )
                out.append(
                    {"role": "assistant", "content": _text(parts), "tool_calls": calls, AT: at}
                )
                continue
            answer = _Namer(turn - 1)
            for part in parts:
                if isinstance(part.get("functionResponse"), dict):
                    response = part["functionResponse"].get("response")
                    given = _given_id(part)
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": placed.get(given or "") or answer(part),
                            "content": json.dumps(response, ensure_ascii=False),
                        }
                    )
            text = _text(parts)
            if text or not any("functionResponse" in p for p in parts):
                out.append({"role": "user", "content": text})
        return out

    def tools(self, body: JsonDict) -> list[Tool]:
        out = []
        for tool in body.get("tools") or ():
            declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
            for d in declarations if isinstance(declarations, list) else ():
                if isinstance(d, dict) and isinstance(d.get("name"), str):
                    schema = d.get("parametersJsonSchema") or d.get("parameters")
                    out.append(
                        Tool(
                            d["name"],
                            str(d.get("description") or ""),
                            schema if isinstance(schema, dict) else None,
                        )
                    )
        return out

    def system(self, body: JsonDict) -> str:
        return _text(_parts(body.get("systemInstruction") or body.get("system_instruction")))

    def streamed(self, body: JsonDict, path: str) -> bool:
        return path.split("?")[0].endswith(":streamGenerateContent")

    def model(self, body: JsonDict, path: str) -> str:
        match = PATH.match(path.split("?")[0])
        return match.group("model") if match else "unknown"

    def read_event(self, event: SSEEvent) -> WireEvent:
        chunk = event.json()
        if isinstance(chunk, dict):
            clean, changed = self.without_unjudged(chunk)
            raw = sse_event(clean, event.name) if changed else event.raw
            calls = any("functionCall" in p for p in _parts(_first(clean)))
            candidates = clean.get("candidates")
            first = candidates[0] if isinstance(candidates, list) and candidates else None
            done = isinstance(first, dict) and first.get("finishReason") is not None
            return WireEvent(event, clean, raw, calls=calls, done=done)
        return WireEvent(event, chunk, event.raw)

    def reader(self, builder: StreamBuilder, body: JsonDict) -> GeminiReader:
        turns = [c for c in body.get("contents") or () if isinstance(c, dict)]
        return GeminiReader(builder, sum(1 for c in turns if c.get("role") == "model"))

    def without_unjudged(self, body: JsonDict) -> tuple[JsonDict, bool]:
        candidates = body.get("candidates")
        if not isinstance(candidates, list) or len(candidates) < 2:
            return body, False
        out = [candidates[0]]
        changed = False
        for candidate in candidates[1:]:
            parts = _parts(candidate.get("content") if isinstance(candidate, dict) else None)
            if any("functionCall" in p for p in parts):
                content = {
                    **candidate["content"],
                    "parts": [p for p in parts if "functionCall" not in p],
                }
                candidate = {**candidate, "content": content}
                changed = True
            out.append(candidate)
        return ({**body, "candidates": out} if changed else body), changed

    def release_stream(
        self, held: Sequence[WireEvent], verdict: Verdict, sent: dict[str, SentCall]
    ) -> StreamRelease:
        for call in verdict.removed:
            if call.id in sent:
                return StreamRelease(refused=f"{call.id} was streamed, then denied")
        ids = iter(verdict.order[len(sent) :])
        out: list[bytes] = []
        if verdict.continued:
            template: JsonDict = {}
            for item in held:
                chunk = _continued(item.chunk)
                template = template or (item.chunk if isinstance(item.chunk, dict) else {})
                if chunk is not None:
                    out.append(sse_event(chunk, item.event.name))
            if verdict.notice and template:
                out.append(sse_event(_continued(template, verdict.notice) or {}))
            return StreamRelease(out)
        last = len(held) - 1
        while last >= 0 and not isinstance(held[last].chunk, dict):
            last -= 1
        for n, item in enumerate(held):
            if not isinstance(item.chunk, dict):
                out.append(item.raw)
                continue
            chunk, changed = _released(item.chunk, verdict, ids, notice=n == last)
            out.append(sse_event(chunk, item.event.name) if changed else item.raw)
        return StreamRelease(out)

    def restore_removed(
        self, body: JsonDict, repairs: Sequence[Repair], messages: Sequence[JsonDict] = ()
    ) -> tuple[JsonDict, list[str]]:
        return restore_gemini(body, messages, repairs)

    @property
    def repairs(self) -> bool:
        return True

    def release_whole(self, body: JsonDict, verdict: Verdict) -> JsonDict:
        chunk, _ = _released(body, verdict, iter(verdict.order), notice=True)
        return chunk

    LIST_KEY = "contents"

    def hidden_entries(
        self,
        message: AssistantMessage,
        removed: Sequence[RemovedCall],
        body: JsonDict | None,
        held: Sequence[WireEvent] | None,
    ) -> list[JsonDict] | None:
        reply = _first(body) if body is not None else None
        if not isinstance(reply, dict):
            parts: list[JsonDict] = [{"text": message.text}] if message.text else []
            parts += [
                {"functionCall": {**_named(c.id, c.name), "args": _object(c.raw_arguments or "")}}
                for c in message.tool_calls
            ]
            reply = {"role": "model", "parts": parts}
        answers = [
            {"functionResponse": {**_named(c.id, c.name), "response": {"error": c.result}}}
            for c in removed
        ]
        return [reply, {"role": "user", "parts": answers}]

    def join_whole(self, first: JsonDict, body: JsonDict) -> JsonDict:
        out = copy.deepcopy(body)
        candidates = out.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return out
        head = _parts(_first(first))
        content = candidates[0].get("content") or {"role": "model"}
        candidates[0]["content"] = {**content, "parts": [*head, *_parts(content)]}
        return out


def _first(chunk: JsonDict) -> Any:
    candidates = chunk.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return first.get("content") if isinstance(first, dict) else None


def _named(call_id: str, name: str) -> JsonDict:
    """A call's name, and its id when the model gave one (the proxy's are NAME#TURN.K)."""
    return {"name": name} if "#" in call_id else {"name": name, "id": call_id}


def _object(arguments: str) -> Any:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _continued(chunk: Any, text: str = "") -> JsonDict | None:
    """A held chunk of a reply the model goes on with: its text, without its calls, its
    finish and its usage (the continuation brings those); None if nothing is left.
    With `text`: a chunk like it that carries only that text."""
    if not isinstance(chunk, dict) or not isinstance(chunk.get("candidates"), list):
        return None
    parts = [p for p in _parts(_first(chunk)) if "functionCall" not in p]
    if text:
        parts = [{"text": text}]
    if not parts:
        return None
    candidate = {k: v for k, v in chunk["candidates"][0].items() if k != "finishReason"}
    candidate["content"] = {**(candidate.get("content") or {}), "parts": parts}
    rest = {k: v for k, v in chunk.items() if k not in ("candidates", "usageMetadata")}
    return {**rest, "candidates": [candidate]}


def _released(
    chunk: JsonDict, verdict: Verdict, ids: Any, *, notice: bool
) -> tuple[JsonDict, bool]:
    kept = {c.id: c for c in verdict.kept}
    parts = _parts(_first(chunk))
    out: list[JsonDict] = []
    changed = False
    for part in parts:
        if "functionCall" in part:
            call = kept.get(next(ids, ""))
            if call is None:
                changed = True
                continue
            if not call.untouched:
                part = {**part, "functionCall": {**part["functionCall"], "args": call.arguments}}
                changed = True
        out.append(part)
    if notice and verdict.notice and not verdict.kept and verdict.removed:
        out.append({"text": verdict.notice})
        changed = True
    if not changed:
        return chunk, False
    result = copy.deepcopy(chunk)
    if not result.get("candidates"):
        result["candidates"] = [{"content": {"role": "model", "parts": []}, "index": 0}]
    first = result["candidates"][0]
    first["content"] = {**(first.get("content") or {"role": "model"}), "parts": out}
    return result, True


class GeminiReader(ReaderBase):
    def __init__(self, builder: StreamBuilder, turn: int = 0) -> None:
        super().__init__(builder)
        self.turn = turn
        """How many model turns the request held: names calls without an id."""
        self._name = _Namer(turn)
        self._order: list[int] = []
        """Content index of each call, in order (its place is its wire index)."""

    def feed_data(self, data: str, event: str | None = None) -> Events:
        raise StreamError(f"Malformed event from the server (not JSON): {data[:300]}")

    def feed_parsed(self, chunk: Any, data: str, event: str | None = None) -> Events:
        if not isinstance(chunk, dict):
            raise StreamError(f"Malformed event from the server (not an object): {data[:300]}")
        if chunk.get("error"):
            raise StreamError(f"The server reported an error mid-stream: {error_text(chunk)}")
        return self.feed(chunk)

    def feed(self, whole: JsonDict) -> Events:
        self.chunk_count += 1
        if isinstance(whole.get("modelVersion"), str):
            self.server_model = whole["modelVersion"]
        events: Events = []
        for part in _parts(_first(whole)):
            call = part.get("functionCall")
            if isinstance(call, dict):
                content, started = self.builder.begin_tool_call(
                    self._name(part), str(call.get("name") or "")
                )
                self._order.append(content)
                args = json.dumps(call.get("args") or {}, ensure_ascii=False)
                events += started + self.builder.tool_call_delta(content, args)
            elif isinstance(part.get("text"), str):
                if part.get("thought"):
                    events += self.builder.thinking(part["text"])
                else:
                    events += self.builder.text(part["text"])
        candidates = whole.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else {}
        if isinstance(first, dict) and isinstance(first.get("finishReason"), str):
            self.finish_reason = first["finishReason"]
        usage = whole.get("usageMetadata")
        if isinstance(usage, dict):
            prompt = usage.get("promptTokenCount") or 0
            output = (usage.get("candidatesTokenCount") or 0) + (
                usage.get("thoughtsTokenCount") or 0
            )
            cached = usage.get("cachedContentTokenCount") or 0
            self.usage = Usage(
                input=max(prompt - cached, 0),
                output=output,
                cache_read=cached,
                total_tokens=prompt + output,
            )
        if events:
            self.first_content = True
        return events

    def finish(self) -> Events:
        if self.chunk_count == 0:
            raise StreamError(
                "The stream ended before any chunk (the connection may have been cut)"
            )
        if self.finish_reason is None:
            raise StreamError(
                f"The stream ended early: no finishReason after {self.chunk_count} chunk(s)"
            )
        stop = "length" if self.finish_reason == "MAX_TOKENS" else None
        return self.builder.done(stop, self.usage)  # type: ignore[arg-type]

    def wire_index(self, content_index: int) -> int | None:
        return self._order.index(content_index) if content_index in self._order else None


GEMINI = GeminiFormat()
