"""A server's tool list: every page of `tools/list`, and time-bounded checks of the
tools' output schemas."""

from __future__ import annotations

import mcp_types
from mcp import ClientSession


async def list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever cannot hang the start
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def bound_output_schemas(session: ClientSession, tools: list[mcp_types.Tool]) -> None:
    """Give the SDK time-bounded validators for the tools' output schemas.

    The SDK checks a result's `structuredContent` against the tool's `outputSchema`
    with `jsonschema`, whose `pattern` matching has no time bound: a hostile server
    could freeze the event loop with its own schema. The SDK keeps the compiled
    validators in a cache (by tool name) that it fills only when empty; filling it
    first with `schema_patterns` validators bounds that matching too.
    """
    cache = getattr(session, "_tool_output_validators", None)
    if not isinstance(cache, dict):
        return
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]
    from referencing import Registry

    from workbench.agent.schema_patterns import with_safe_patterns

    for tool in tools:
        schema = tool.output_schema
        if not isinstance(schema, dict):
            continue
        cls = validator_for(schema)
        try:
            cls.check_schema(schema)
        except SchemaError:
            continue  # the SDK reports an invalid schema itself, at the call
        cache[tool.name] = with_safe_patterns(cls)(schema, registry=Registry())
