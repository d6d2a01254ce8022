"""What the workbench offers an MCP server as its client: roots, logging, listening
for a changed tool list, and answering its sampling and elicitation requests.

- **roots**: each server's roots (`roots/list`; by default the run's workspace and
  the directories its command names, see `workbench.mcp.roots`), so a server such as
  server-filesystem can take its allowed directories from the client;
  `McpHub.set_roots` tells a server when they change (`roots/list_changed`).
- **logging**: a server's `notifications/message` lines are kept in its `server_log`
  (with their level and logger); `--mcp-log-level` asks servers for that level.
- **tools/list_changed**: the server's tools are listed again and `on_tools_changed`
  is told, so the new list takes effect for the next model request (a burst of them
  costs one re-list, and one more if some came during it).
- **resources/updated**: a subscribed resource changed (`on_resource_updated`).
- **resources/list_changed**, **prompts/list_changed**: `on_list_changed` lists them
  again (`McpConnection.catalog`).
- **sampling** and **elicitation**: passed to the `Asker` (a person in the app, the
  approval policy headless; see `workbench.mcp.requests`).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
from pydantic import FileUrl

from workbench.bus_events import McpSamplingEvent
from workbench.mcp.requests import Asker, SampleFn, declined, sampling_event

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[str, ...] = LogLevel.__args__  # type: ignore[attr-defined]
SERVER_LOG_LINES = 500
_LIST_CHANGED: dict[type, str] = {
    mcp_types.ResourceListChangedNotification: "resources",
    mcp_types.PromptListChangedNotification: "prompts",
}


class ClientSide:
    """The client's half of one connection: its roots, the server's log lines, and what
    to do when the server's tool list changes."""

    def __init__(self, roots: Sequence[Path] = (), log_level: LogLevel | None = None) -> None:
        self.roots = list(roots)
        self.log_level = log_level
        self.server_log: deque[str] = deque(maxlen=SERVER_LOG_LINES)
        """`LEVEL [logger] message` for each `notifications/message` of the server."""
        self.on_log: Callable[[str], None] | None = None
        self.on_tools_changed: Callable[[], Any] | None = None
        """Called (and awaited if it returns an awaitable) after `tools/list_changed`."""
        self.on_resource_updated: Callable[[str], None] | None = None
        """Told the URI of each `notifications/resources/updated` (a subscribed one)."""
        self.on_list_changed: Callable[[str], Any] | None = None
        """Awaited with "resources" or "prompts" after that list changed (the connection
        lists it again)."""
        self._relisting: anyio.Event | None = None
        self._tools_stale = False
        self.server = ""
        """The server's name, for the asker's questions."""
        self.asker: Asker | None = None
        self.sampler: SampleFn | None = None
        """Runs an approved sampling request on the run's model."""
        self.on_sampled: Callable[[McpSamplingEvent], Awaitable[None]] | None = None
        """Awaited with what became of each sampling request (the hub puts it on the bus)."""
        self.redact: Callable[[str], str] | None = None
        """Masks known secrets in the server's texts (`workbench.redact.Redactor`)."""

    def masked(self, text: str | None) -> str | None:
        """`text` with known secrets masked (None stays None)."""
        return self.redact(text) if text is not None and self.redact is not None else text

    async def list_roots(self, _context: Any) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(
            roots=[
                mcp_types.Root(uri=FileUrl(path.resolve().as_uri()), name=path.name or str(path))
                for path in self.roots
            ]
        )

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        where = f" [{params.logger}]" if params.logger else ""
        line = self.masked(f"{params.level.upper()}{where} {text}") or ""
        self.server_log.append(line)
        if self.on_log is not None:
            self.on_log(line)

    async def notified(self, message: Any) -> None:
        """A server notification the SDK passed on (after its own callbacks)."""
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            if self.on_resource_updated is not None:
                self.on_resource_updated(str(message.params.uri))
            return
        kind = _LIST_CHANGED.get(type(message))
        if kind is not None and self.on_list_changed is not None:
            await self.on_list_changed(kind)
            return
        if isinstance(message, mcp_types.ToolListChangedNotification):
            await self._tools_changed()

    async def _tools_changed(self) -> None:
        """Re-list once per burst: a notification that comes while a re-list is going
        only asks for one more after it (each notification runs in a task of its own,
        so a storm of them would otherwise re-list once each)."""
        if self.on_tools_changed is None:
            return
        self._tools_stale = True
        if self._relisting is not None and not self._relisting.is_set():
            return
        done = self._relisting = anyio.Event()
        try:
            while self._tools_stale:
                self._tools_stale = False
                outcome = self.on_tools_changed()
                if hasattr(outcome, "__await__"):
                    await outcome
        finally:
            done.set()

    async def settled(self) -> None:
        """Wait for a tool list that changed to be listed again: a call whose server
        changed its tools while it ran returns once the new list is in place, so the
        next model request already has it."""
        if self._relisting is not None:
            await self._relisting.wait()

    async def elicit(self, _context: Any, params: Any) -> Any:
        if self.asker is None:
            return mcp_types.ElicitResult(action="decline")
        return await self.asker.elicit(self.server, params)

    async def sample(self, _context: Any, params: Any) -> Any:
        if self.redact is not None:  # what the person, the model and the session see
            params = type(params).model_validate(
                masked_strings(params.model_dump(by_alias=True), self.redact)
            )
        sent: list[mcp_types.CreateMessageRequestParams] = []

        async def run(
            request: mcp_types.CreateMessageRequestParams, model: str | None = None
        ) -> mcp_types.CreateMessageResult:
            sent.append(request)  # what went to the model, after any edit
            assert self.sampler is not None
            return await self.sampler(request, model)

        outcome: Any
        if self.asker is None or self.sampler is None:
            outcome = declined("this client has no model to answer with")
        else:
            try:
                outcome = await self.asker.sample(self.server, params, run)
            except Exception as exc:  # noqa: BLE001 - the server gets the reason, the run goes on
                outcome = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=str(exc))
        if self.on_sampled is not None:
            await self.on_sampled(
                sampling_event(self.server, params, sent[-1] if sent else None, outcome)
            )
        return outcome

    def session_options(self) -> dict[str, Any]:
        """Keyword arguments for the SDK's `ClientSession` (roots only when there are)."""
        options: dict[str, Any] = {
            "logging_callback": self.log,
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
        }
        if self.roots:
            options["list_roots_callback"] = self.list_roots
        return options


def masked_strings(value: Any, redact: Callable[[str], str]) -> Any:
    """`value` (JSON-like) with `redact` applied to every string in it."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: masked_strings(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [masked_strings(item, redact) for item in value]
    return value
