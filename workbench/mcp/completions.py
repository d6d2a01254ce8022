"""Completions (`completion/complete`): what a server suggests for a prompt's argument
or a resource template's variable, as far as it has been typed."""

from __future__ import annotations

from typing import Any

import mcp_types

from workbench.mcp.catalog import ask

MAX_SUGGESTIONS = 100


async def complete(
    server: str, session: Any, ref: tuple[str, str], name: str, value: str, context: dict[str, str]
) -> list[str]:
    """The server's suggestions for argument `name` of `ref` (("ref/prompt", NAME) or
    ("ref/resource", URI_TEMPLATE)) typed so far as `value`, the other arguments
    being `context`.

    Raises:
        McpCallError: the server failed, refused or did not answer.
    """
    kind, target = ref
    reference: Any = (
        mcp_types.PromptReference(type="ref/prompt", name=target)
        if kind == "ref/prompt"
        else mcp_types.ResourceTemplateReference(type="ref/resource", uri=target)
    )
    result = await ask(
        server,
        f"completion/complete {name}",
        lambda: session.complete(reference, {"name": name, "value": value}, context or None),
    )
    return [str(v) for v in result.completion.values[:MAX_SUGGESTIONS]]
