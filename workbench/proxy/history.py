"""A request's earlier history as transcript messages: a conversation whose first request
already carries turns starts its run after them, with them in its transcript."""

from __future__ import annotations

import itertools
from typing import Any

from workbench.agent import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from workbench.agent.types import Message
from workbench.proxy.wire import content_text

_call_numbers = itertools.count(1)


def to_messages(history: list[dict[str, Any]]) -> list[Message]:
    """A request's earlier history as transcript messages (the run starts after it)."""
    out: list[Message] = []
    names: dict[str, str] = {}
    for m in history:
        role = m.get("role")
        if role == "user":
            out.append(UserMessage(content=content_text(m.get("content"))))
        elif role == "assistant":
            content: list[Any] = []
            text = content_text(m.get("content"))
            if text:
                content.append(TextContent(text=text))
            for call in m.get("tool_calls") or ():
                if not isinstance(call, dict):
                    continue
                function = call.get("function")
                if not isinstance(function, dict):
                    function = {}
                call_id = str(call.get("id") or f"call_{next(_call_numbers)}")
                names[call_id] = str(function.get("name") or "")
                content.append(
                    ToolCall(
                        id=call_id,
                        name=names[call_id],
                        raw_arguments=str(function.get("arguments") or ""),
                    )
                )
            out.append(AssistantMessage(content=content))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            out.append(
                ToolResultMessage(
                    tool_call_id=call_id,
                    tool_name=names.get(call_id, ""),
                    content=[TextContent(text=content_text(m.get("content")))],
                )
            )
    return out
