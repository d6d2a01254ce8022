"""What the proxy reads and writes on the wire: no I/O here.

- `message_key`: what identifies a chat message when a later request repeats it, so
  requests can be grouped into conversations (SDKs re-serialize messages: `null`
  and `""` content, reordered keys, re-encoded arguments, so only the role, the
  text, the tool call ids and names, and the answered id count).
- `Verdict`: what the gate made of a response's calls; each format's module
  (`workbench.proxy.formats`) rewrites the response by it: kept calls carry exactly
  the arguments the rules judged, removed calls are gone, and a response left with
  no call says why in its text.
- `restore_removed`: the request as forwarded: each removed call put back into the
  assistant message it came from and answered with its result (the denial), right
  after the agent's own tool messages for that reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

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


# -- decisions and the rewritten response ------------------------------------------------


@dataclass
class ReleasedCall:
    """A call the agent receives: its id, name and the arguments the rules judged."""

    id: str
    name: str
    arguments: JsonDict
    raw_arguments: str = ""
    """The arguments as the model wrote them."""
    untouched: bool = True
    """The arguments are the model's own (nobody edited them)."""

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
    order: list[str] = field(default_factory=list)
    """Every call's id, in the model's order."""
    continued: bool = False
    """Every call was removed and the proxy answers them upstream itself: the reply
    goes on with the model's continuation (no notice, no end of the reply yet)."""
    separator: str = ""
    """A continued reply whose text the continuation's text will be joined to (chat,
    Gemini): what goes between them."""

    @property
    def notice(self) -> str:
        """What a reply left with no tool call gets added, so the agent's user sees why
        (a continued one: only the separator)."""
        if self.continued:
            return self.separator
        if self.kept or not self.removed:
            return ""
        lines = [f"[workbench] {c.name} was not run: {c.result}" for c in self.removed]
        return ("\n\n" if self.text else "") + "\n".join(lines)

    @property
    def released_text(self) -> str:
        return self.text + self.notice


# -- the request as forwarded -------------------------------------------------------------


@dataclass
class HiddenTurn:
    """A reply whose calls were all denied, answered upstream by the proxy itself: what
    the upstream saw, to put back where the agent's copy of the reply begins."""

    entries: list[JsonDict]
    """The model's reply (with its calls) and the denials, as entries of the request's
    list (chat messages, Responses items, Anthropic messages, Gemini contents)."""
    text: str
    """The reply's text, which the agent received (chat and Gemini: the head of the text
    of the agent's copy)."""
    visible: int
    """How many pieces of the agent's copy came from this reply (Responses items,
    Anthropic blocks)."""


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
    hidden: list[HiddenTurn] = field(default_factory=list)
    """Replies answered upstream by the proxy before this one, in order: the agent's
    copy of the reply begins with what they showed it (see `HiddenTurn`)."""


def restore_removed(body: JsonDict, repairs: Sequence[Repair]) -> tuple[JsonDict, list[str]]:
    """The request body with every removed call and its answer put back, and the replies
    the proxy answered itself put back before the agent's copy, and a note each."""
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
        restored = dict(agent_copy)
        if repair.results:
            theirs = {
                c.get("id"): c for c in agent_copy.get("tool_calls") or () if isinstance(c, dict)
            }
            restored["content"] = repair.content
            restored["tool_calls"] = [theirs.get(c["id"], c) for c in repair.calls]
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
        messages[at] = restored
        if repair.hidden:
            head = "".join(t.text for t in repair.hidden)
            text = content_text(agent_copy.get("content"))
            if not repair.results and text.startswith(head):
                restored["content"] = text[len(head) :] or None
            messages[at:at] = [e for t in repair.hidden for e in t.entries]
            notes.append(hidden_note(at, repair.hidden))
    return {**body, "messages": messages}, notes


def hidden_note(at: int, hidden: Sequence[HiddenTurn]) -> str:
    return (
        f"message {at}: {len(hidden)} reply(ies) whose calls the proxy answered itself "
        "(denied) put back before the agent's copy"
    )
