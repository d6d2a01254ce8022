"""What the app does with MCP resources and prompts: opens a server's catalog and keeps
what the user attached for the next message.

An attachment is a `Reading` (a read resource or a got prompt). The message box shows
each one above it until the next message is sent; that message is then one user
message holding, for each attachment, its heading (`[MCP resource URI from server
NAME]`) and its content blocks, and last the typed text (`workbench.mcp.catalog.
attached_message`). A message typed during a run carries them the same way into the
steering or follow-up queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.mcp.catalog import Reading
    from workbench.widgets.prompt_bar import PromptBar


class McpAttachments:
    """Mixed into the app: `prompt_bar` is its message box."""

    if TYPE_CHECKING:

        @property
        def prompt_bar(self) -> PromptBar: ...

    _attachments: list[Reading]

    def open_mcp_catalog(self, connection: Any, linked: list[dict[str, Any]] | None = None) -> None:
        """Show `connection`'s resources and prompts (and `linked`, the resources a tool
        call's result named)."""
        from workbench.widgets.mcp_catalog import McpCatalogScreen

        self.push_screen(  # type: ignore[attr-defined]
            McpCatalogScreen(connection, self.attach, self.drop_attachments, linked)
        )

    def linked_resources(self, record: Any) -> tuple[Any, list[dict[str, Any]]] | None:
        """The server and the resources the result of call `record` named, if any."""
        hub = self.runtime.mcp  # type: ignore[attr-defined]
        details = getattr(record, "details", None)
        if hub is None or not isinstance(details, dict) or not details.get("resources"):
            return None
        source = self.sources.get(record.name, "")  # type: ignore[attr-defined]
        if not source.startswith("mcp:") or source[4:] != details.get("server"):
            return None
        try:
            return hub.connection(source[4:]), list(details["resources"])
        except KeyError:
            return None

    @property
    def attachments(self) -> list[Reading]:
        return list(getattr(self, "_attachments", []))

    def attach(self, reading: Reading) -> int:
        """Send `reading` with the next message; returns how many are attached."""
        self._attachments = [*self.attachments, reading]
        self._show_attachments()
        return len(self._attachments)

    def drop_attachments(self) -> int:
        """Forget the attachments; returns how many there were."""
        count = len(self.attachments)
        self._attachments = []
        self._show_attachments()
        return count

    def _show_attachments(self) -> None:
        self.prompt_bar.show_attachments([r.heading.splitlines()[0] for r in self.attachments])

    def outgoing(self, text: str) -> Any:
        """What to send for `text`: the text itself, or one user message carrying the
        attachments and then the text (the attachments are then used up)."""
        if not self.attachments:
            return text
        from workbench.mcp.catalog import attached_message

        message = attached_message(self.attachments, text)
        self.drop_attachments()
        return message
