"""What the proxy reads and writes on the wire: no I/O here.

- `message_key`: what identifies a chat message when a later request repeats it, so
  requests can be grouped into conversations (SDKs re-serialize messages: `null`
  and `""` content, reordered keys, re-encoded arguments, so only the role, the
  text, the tool call ids and names, and the answered id count).
- `SSESplitter`: cuts a streamed body into whole server-sent events, so an event is
  either passed through or held, never half of each.
- `rewrite_stream` / `rewrite_completion`: the response as released to the agent
  once the gate has decided: kept calls carry exactly the arguments the rules
  judged (re-serialized), removed calls are gone, and a response left with no call
  says why in its text.
- `restore_removed`: the request as forwarded: each removed call put back into the
  assistant message it came from and answered with its result (the denial), right
  after the agent's own tool messages for that reply.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.redact import CREDENTIAL_HEADERS

JsonDict = dict[str, Any]
MessageKey = tuple[Any, ...]

HOP_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "accept-encoding",
        "content-encoding",
    }
)
"""Headers that describe one HTTP hop, not the request: httpx and the server set their own."""


def content_text(content: Any) -> str:
    """The text of a message's `content`: a string, a list of parts, or null."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def message_key(message: Any) -> MessageKey:
    """What must match for a message of a later request to be this one."""
    if not isinstance(message, dict):
        return ("?", repr(message))
    calls = tuple(
        (call.get("id"), (call.get("function") or {}).get("name"))
        for call in message.get("tool_calls") or ()
        if isinstance(call, dict)
    )
    return (
        message.get("role"),
        content_text(message.get("content")),
        calls,
        message.get("tool_call_id"),
    )


def message_keys(messages: Iterable[Any]) -> list[MessageKey]:
    return [message_key(m) for m in messages]


def safe_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers worth recording and forwarding: no credentials, no hop-by-hop ones."""
    return {
        k: v
        for k, v in headers
        if k.lower() not in CREDENTIAL_HEADERS and k.lower() not in HOP_HEADERS
    }


# -- streamed bodies -------------------------------------------------------------------


class SSESplitter:
    """Bytes in, whole SSE events out (each with its blank-line terminator)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer + data
        out: list[bytes] = []
        start = 0
        while True:
            end, size = _event_end(buffer, start)
            if end < 0:
                break
            out.append(buffer[start : end + size])
            start = end + size
        self._buffer = buffer[start:]
        return out

    def rest(self) -> bytes:
        """What is left when the body ends (an unterminated last event)."""
        rest, self._buffer = self._buffer, b""
        return rest


def _event_end(buffer: bytes, start: int) -> tuple[int, int]:
    best, size = -1, 0
    for sep in (b"\n\n", b"\r\n\r\n", b"\r\r"):
        i = buffer.find(sep, start)
        if i >= 0 and (best < 0 or i < best):
            best, size = i, len(sep)
    return best, size


def event_data(event: bytes) -> tuple[str | None, str | None]:
    """(event name, data) of one SSE event; data None for a comment-only event."""
    text = event.decode("utf-8", errors="replace")
    data: list[str] = []
    name: str | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line or line.startswith(":"):
            continue
        field_name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field_name == "data":
            data.append(value)
        elif field_name == "event":
            name = value
    return name, ("\n".join(data) if data else None)


def sse_event(chunk: JsonDict | str) -> bytes:
    data = chunk if isinstance(chunk, str) else json.dumps(chunk, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


# -- decisions and the rewritten response ------------------------------------------------


@dataclass
class ReleasedCall:
    """A call the agent receives: its id, name and the arguments the rules judged."""

    id: str
    name: str
    arguments: JsonDict

    @property
    def wire_arguments(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)

    def as_delta(self, index: int) -> JsonDict:
        return {
            "index": index,
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.wire_arguments},
        }

    def as_call(self) -> JsonDict:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.wire_arguments},
        }


@dataclass
class RemovedCall:
    """A call kept from the agent (denied, refused, answered by a person) and its answer."""

    id: str
    name: str
    raw_arguments: str
    result: str


@dataclass
class Verdict:
    """What the gate and the stepper made of one response's tool calls."""

    text: str = ""
    """The reply's text as the model wrote it."""
    kept: list[ReleasedCall] = field(default_factory=list)
    removed: list[RemovedCall] = field(default_factory=list)

    @property
    def notice(self) -> str:
        """What a reply left with no tool call gets added, so the agent's user sees why."""
        if self.kept or not self.removed:
            return ""
        lines = [f"[workbench] {c.name} was not run: {c.result}" for c in self.removed]
        return ("\n\n" if self.text else "") + "\n".join(lines)

    @property
    def released_text(self) -> str:
        return self.text + self.notice


def rewrite_stream(held: Sequence[bytes], verdict: Verdict) -> list[bytes]:
    """The held part of a streamed response, as released to the agent.

    Every held tool-call delta is dropped and the kept calls are sent whole, in one
    chunk before the finish reason; chunks left empty by the drop are left out.
    """
    out: list[bytes] = []
    template: JsonDict | None = None
    inserted = False

    def insert() -> None:
        nonlocal inserted
        inserted = True
        if template is None:
            return
        if verdict.kept:
            delta: JsonDict = {"tool_calls": [c.as_delta(i) for i, c in enumerate(verdict.kept)]}
        else:
            delta = {"content": verdict.notice}
        chunk = {k: v for k, v in template.items() if k not in ("choices", "usage")}
        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
        out.append(sse_event(chunk))

    for event in held:
        _name, data = event_data(event)
        chunk = _json_object(data)
        if chunk is None:
            if data is not None and data.strip() == "[DONE]" and not inserted:
                insert()
            out.append(event)
            continue
        template = template or chunk
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            out.append(event)
            continue
        changed = False
        finishing = False
        kept_choices = []
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                kept_choices.append(choice)
                continue
            choice = dict(choice)
            delta = choice.get("delta")
            if isinstance(delta, dict) and "tool_calls" in delta:
                delta = {k: v for k, v in delta.items() if k != "tool_calls"}
                choice["delta"] = delta
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
            out.append(event)
        elif kept_choices or chunk.get("usage") is not None:
            out.append(sse_event({**chunk, "choices": kept_choices}))
    if not inserted:
        insert()
    return out


def rewrite_completion(body: JsonDict, verdict: Verdict) -> JsonDict:
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


# -- the request as forwarded -------------------------------------------------------------


@dataclass
class Repair:
    """A reply released with calls removed, and how to put them back for the model."""

    position: int
    """Where the released reply sits in the agent's message list."""
    released_key: MessageKey
    """The released reply's key: the repair applies only where the agent repeats it."""
    content: Any
    """The reply's content as the model wrote it (before any notice was added)."""
    calls: list[JsonDict]
    """Every call of the reply in the model's order; kept ones are replaced by the
    agent's own copy when the request is forwarded."""
    results: list[JsonDict]
    """A `tool` message for each removed call, carrying its answer."""


def restore_removed(body: JsonDict, repairs: Sequence[Repair]) -> tuple[JsonDict, list[str]]:
    """The request body with every removed call and its answer put back, and a note each."""
    messages = body.get("messages")
    if not repairs or not isinstance(messages, list):
        return body, []
    messages = list(messages)
    notes: list[str] = []
    for repair in sorted(repairs, key=lambda r: r.position, reverse=True):
        at = repair.position
        if at >= len(messages) or message_key(messages[at]) != repair.released_key:
            continue
        agent_copy = messages[at]
        theirs = {c.get("id"): c for c in agent_copy.get("tool_calls") or () if isinstance(c, dict)}
        restored = dict(agent_copy)
        restored["content"] = repair.content
        restored["tool_calls"] = [theirs.get(c["id"], c) for c in repair.calls]
        messages[at] = restored
        end = at + 1
        while (
            end < len(messages)
            and isinstance(messages[end], dict)
            and messages[end].get("role") == "tool"
        ):
            end += 1
        messages[end:end] = repair.results
        names = ", ".join(f"{r['tool_call_id']}" for r in repair.results)
        notes.append(
            f"message {at}: the calls the agent never received ({names}) "
            "put back with their answers"
        )
    return {**body, "messages": messages}, notes


def _json_object(data: str | None) -> JsonDict | None:
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _has_content(delta: Any) -> bool:
    if not isinstance(delta, dict):
        return False
    return (
        any(v not in (None, "", [], {}) for k, v in delta.items() if k != "role") or "role" in delta
    )
