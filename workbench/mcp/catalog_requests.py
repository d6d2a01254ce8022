"""Asking an MCP server about its resources and prompts: reading, subscribing,
completing and getting them (`McpConnection`'s half that is not tools; see catalog.py
for the lists themselves)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp import ClientSession

from workbench.mcp.catalog import Catalog, Reading, ask, prompt_reading, resource_reading
from workbench.mcp.completions import complete
from workbench.mcp.config import McpServerConfig
from workbench.mcp.failures import McpCallError


class CatalogRequests:
    """`read_resource`, `subscribe`, `complete` and `get_prompt`, for `McpConnection`."""

    config: McpServerConfig
    status: str
    error: str | None
    catalog: Catalog
    subscribed: set[str]
    updates: dict[str, int]
    on_updated: list[Callable[[str], None]]
    _session: ClientSession | None
    _capabilities: Any

    @property
    def name(self) -> str:
        return self.config.name

    def session_for(self, what: str) -> ClientSession:
        """The open session, for request `what`; raises `McpCallError` if not running."""
        if self._session is None or self.status != "ready":
            why = self.error or self.status
            raise McpCallError(f"MCP server {self.name} is not running ({what}): {why}")
        return self._session

    async def read_resource(self, uri: str) -> Reading:
        """Read the resource at `uri` (`resources/read`).

        Raises:
            McpCallError: the server is not running, failed, refused or did not answer.
        """
        session = self.session_for(f"resources/read {uri}")
        result = await ask(self.name, f"resources/read {uri}", lambda: session.read_resource(uri))
        return resource_reading(self.name, uri, result)

    async def subscribe(self, uri: str) -> None:
        """Ask to be told when the resource at `uri` changes (`resources/subscribe`).

        Raises:
            McpCallError: the server does not offer subscriptions, or refused.
        """
        resources = getattr(self._capabilities, "resources", None)
        if not getattr(resources, "subscribe", False):
            raise McpCallError(f"MCP server {self.name} does not offer resource subscriptions")
        session = self.session_for(f"resources/subscribe {uri}")
        await ask(self.name, f"resources/subscribe {uri}", lambda: session.subscribe_resource(uri))
        self.subscribed.add(uri)

    def _resource_updated(self, uri: str) -> None:
        self.updates[uri] = self.updates.get(uri, 0) + 1
        for listener in list(self.on_updated):
            listener(uri)

    async def complete(
        self, ref: tuple[str, str], name: str, value: str, context: dict[str, str]
    ) -> list[str]:
        """The server's suggestions (see `completions.complete`); [] if it offers none."""
        if getattr(self._capabilities, "completions", None) is None:
            return []
        session = self.session_for("completion/complete")
        return await complete(self.name, session, ref, name, value, context)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Reading:
        """Get prompt `name` filled with `arguments` (`prompts/get`).

        Raises:
            McpCallError: the server is not running, failed, refused or did not answer.
        """
        session = self.session_for(f"prompts/get {name}")
        result = await ask(
            self.name, f"prompts/get {name}", lambda: session.get_prompt(name, arguments)
        )
        return prompt_reading(self.name, name, arguments, result)

    async def _relist_catalog(self, kind: str) -> None:
        session = self._session
        if session is not None and self.status == "ready":
            await self.catalog.load(session, self._capabilities, (kind,))
