"""What one tool result may carry to the model, the views and the session file.

Any tool (a built-in, the user's own, an MCP server's) can return far more text
than a model can read or a session should keep: a server once sent 100 MB. Every
result and every update passes through `limit_result` before anyone sees it:

- each text block longer than `MAX_TEXT_CHARS` keeps its first and last halves,
  with a notice in between that states the size it had (the notice is part of
  what is recorded, so the session says what was left out);
- every string in `details` and `structured_content` is held to the same bound;
- `redact` (the runtime's `workbench.redact.Redactor`) replaces the values of the
  keys the workbench knows, in text and details alike;
- images over the caps of `workbench.agent.content_caps` become a text block saying
  which cap they passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.agent.content_caps import DEFAULT_CAPS, ContentCaps, cap_images
from workbench.agent.tool import AgentToolResult
from workbench.agent.types import TextContent

MAX_TEXT_CHARS = 100_000
"""Most characters one text block (or one string in details) keeps."""

Redact = Callable[[str], str]


def limit_text(text: str, what: str = "this result") -> str:
    """`text`, or its head and tail with a notice saying how much was left out."""
    if len(text) <= MAX_TEXT_CHARS:
        return text
    keep = MAX_TEXT_CHARS // 2
    size = len(text.encode("utf-8", "surrogatepass"))
    notice = (
        f"\n[... {len(text) - 2 * keep} characters of {what} left out: it was "
        f"{len(text)} characters ({size} bytes); showing the first and last {keep} ...]\n"
    )
    return text[:keep] + notice + text[-keep:]


def limit_result(
    result: AgentToolResult, redact: Redact | None = None, caps: ContentCaps = DEFAULT_CAPS
) -> AgentToolResult:
    """`result` within the bounds (the same object when nothing had to change)."""
    content = result.content
    capped = cap_images(content, caps)
    changed = capped is not None
    if capped is not None:
        content = capped
    for i, block in enumerate(content):
        if isinstance(block, TextContent):
            text = limit_text(redact(block.text) if redact else block.text)
            if text != block.text:
                if not changed:
                    content, changed = list(content), True
                content[i] = TextContent(text=text)
    details = _limit(result.details, redact)
    structured = _limit(result.structured_content, redact)
    if not changed and details is result.details and structured is result.structured_content:
        return result
    return result.model_copy(
        update={"content": content, "details": details, "structured_content": structured}
    )


def _limit(value: Any, redact: Redact | None) -> Any:
    """`value` with every string bounded and redacted (the same object if unchanged)."""
    if isinstance(value, str):
        text = limit_text(redact(value) if redact else value, "this value")
        return value if text == value else text
    if isinstance(value, dict):
        out = {key: _limit(item, redact) for key, item in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, list):
        items = [_limit(item, redact) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value
