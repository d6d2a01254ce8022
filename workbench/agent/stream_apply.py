"""How one stream event changes the message being streamed: the one place it happens.

A provider's stream builder, the session reader rebuilding a recorded stream and
the view fold all advance a message by the same rules, so the message each of them
holds after events 1..N is the same (the fold keeps no message: it applies the
rules to its own plain blocks through `open_at` and `delta_target`, which take any
block tagged by `type`):

- `text_start` / `thinking_start` / `toolcall_start` open an empty block at the
  event's index (padding with empty text blocks up to it); a tool call opens with
  its id and name and no arguments yet;
- a `*_delta` extends the block at its index when it is a block of that kind, else
  changes nothing;
- `toolcall_end` parses the call's argument string into `arguments` (leniently:
  {} when it is not a JSON object; the argument pipeline says why later);
- every other event (start, text and thinking ends, done, error) leaves the
  content as it is.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, Protocol, TypeVar

from workbench.agent.events import AssistantMessageEvent
from workbench.agent.types import AssistantMessage, TextContent, ThinkingContent, ToolCall
from workbench.json_text import loads

Block = TextContent | ThinkingContent | ToolCall


class Tagged(Protocol):
    """A block as the rules see it: its kind by its tag ("text", "thinking", "toolCall").
    The message's blocks are; so are the view fold's own, lighter ones."""

    @property
    def type(self) -> str: ...


B = TypeVar("B", bound=Tagged)

_FIELD = {"text_delta": "text", "thinking_delta": "thinking", "toolcall_delta": "raw_arguments"}
_BLOCK_TYPE = {"text_delta": "text", "thinking_delta": "thinking", "toolcall_delta": "toolCall"}
DELTAS = frozenset(_FIELD)
STARTS = frozenset({"text_start", "thinking_start", "toolcall_start"})


def apply_stream_event(
    message: AssistantMessage, event: AssistantMessageEvent, started: ToolCall | None = None
) -> Block | None:
    """Advance `message` by one stream event; returns the block it opened or changed
    (None when the event changes no block).

    `started`: for a `toolcall_start`, the call it opens (only its id and name are
    taken); by default the one at that index of the event's `partial` message, and
    a call with an empty id and name when neither has one.
    """
    index = event.content_index
    if index is None or index < 0:
        return None
    kind = event.type
    if kind in DELTAS:
        return apply_delta(message, kind, index, event.delta or "")
    content = message.content
    if kind in STARTS:
        if kind == "text_start":
            block: Block = TextContent(text="")
        elif kind == "thinking_start":
            block = ThinkingContent(thinking="")
        else:
            call = started or tool_call_at(event.partial, index)
            id_, name = (call.id, call.name) if call is not None else ("", "")
            block = ToolCall(id=id_, name=name, raw_arguments="")
        return open_at(content, index, block, _empty_text)
    if kind == "toolcall_end" and index < len(content):
        ended = content[index]
        if isinstance(ended, ToolCall):
            ended.arguments = parse_arguments_leniently(ended.raw_arguments or "")
            return ended
    return None


def apply_delta(message: AssistantMessage, kind: str, index: int, delta: str) -> Block | None:
    """What `apply_stream_event` does for a `*_delta` event. A run of deltas of one kind
    to one block, joined, applies as the run would one by one."""
    block = delta_target(message.content, kind, index)
    if block is not None:
        _extend(block, _FIELD[kind], delta)
    return block


def delta_target(content: Sequence[B], kind: str, index: int) -> B | None:
    """The block a `kind` delta at `index` extends: the block there when it is of the
    delta's kind, else None (the delta changes nothing)."""
    if not 0 <= index < len(content):
        return None
    block = content[index]
    # By its tag: a pydantic isinstance runs Python.
    return block if block.type == _BLOCK_TYPE[kind] else None


def open_at(content: MutableSequence[B], index: int, block: B, blank: Callable[[], B]) -> B:
    """Put `block` at `index` of `content`, padding with `blank()` blocks up to it (what
    a `*_start` does); returns `block`."""
    while len(content) < index:
        content.append(blank())
    if index == len(content):  # the usual case: the next block (no blank made to replace)
        content.append(block)
    else:
        content[index] = block
    return block


def tool_call_at(message: AssistantMessage | None, index: int) -> ToolCall | None:
    """The block at `index` of `message` if it is a tool call, else None."""
    if message is None or not 0 <= index < len(message.content):
        return None
    call = message.content[index]
    return call if call.type == "toolCall" else None


def started_call(call: ToolCall) -> ToolCall:
    """`call` as a `toolcall_start` opens it: its id and name, no arguments yet."""
    return ToolCall(id=call.id, name=call.name, raw_arguments="")


def parse_arguments_leniently(raw: str) -> dict[str, Any]:
    """The arguments as a dict if `raw` is a JSON object, else {} (the loop reports why)."""
    if not raw.strip():
        return {}
    try:
        value = loads(raw)
    except ValueError:  # malformed, or nested too deep: the argument pipeline says which
        return {}
    return value if isinstance(value, dict) else {}


def _empty_text() -> TextContent:
    return TextContent(text="")


def _extend(block: Block, name: str, delta: str) -> None:
    """`block.<name> += delta`, in time that grows with `delta`, not with the field.

    A model's `x.text += d` copies the whole text each time (the model still holds a
    reference, so the string cannot grow where it is), so a long argument streamed in
    small deltas would cost time growing with the square of its length
    (`benchmarks/stream_apply.py`). Taken out of the model first, the string has one
    reference and CPython extends it in place. Setting the field in the model's
    `__dict__` is what the model's own assignment does for these models (no
    validation on assignment, and the field is already set).
    """
    fields = block.__dict__
    text = fields.pop(name) or ""
    text += delta
    fields[name] = text
