"""Every page of a paginated MCP list (`tools/list`, `resources/list`, `prompts/list`...)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types
from mcp import ClientSession

MAX_PAGES = 100
"""A server that pages forever cannot hang the start."""


async def all_pages(
    fetch: Callable[..., Awaitable[Any]],
    field: str,
    warn: Callable[[str], None] | None = None,
) -> list[Any]:
    """The items under `field` of every page `fetch(params=...)` returns; `warn` is
    told when the server still had a next page after `MAX_PAGES`."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await fetch(params=params)
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            break
    if cursor and warn is not None:
        method = {"resource_templates": "resources/templates"}.get(field, field)
        warn(
            f"{method}/list still gave a next page after {MAX_PAGES} pages: the list was "
            f"cut there ({len(items)} items)"
        )
    return items


async def list_tools(
    session: ClientSession, warn: Callable[[str], None] | None = None
) -> list[mcp_types.Tool]:
    return await all_pages(session.list_tools, "tools", warn)
