"""Wrappers around an MCP transport's two streams, between the transport and the SDK.

`WatchedReader` tells when the server's side of the connection ends (a stdio server
that exits, an HTTP stream that closes), so a server that dies while idle is noticed
when it happens, not at the next call.

`ToolListGuard` drops, from each `tools/list` answer, the tools that do not parse, so
one bad tool costs only itself (the SDK would reject the whole list).

`SurrogateRepair` reads a line the SDK refused only for a lone surrogate's JSON escape
(`"\\ud800"`, valid JSON the SDK's parser rejects) with that character as U+FFFD, so
the answer arrives instead of failing every call in flight.

`CancelReasonWriter` puts the user's reason into the `notifications/cancelled` the
SDK sends for an aborted request (the SDK always writes "caller cancelled"). The
reason travels in a context variable set by the task that makes the call: the SDK
writes a request's cancellation from that same task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import mcp_types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from workbench.json_text import LINE_DEPTH, loads, without_surrogates


@dataclass
class CallCancel:
    """The reason an in-flight call was aborted with (None until it is)."""

    reason: str | None = None


current_call: ContextVar[CallCancel | None] = ContextVar("mcp_current_call", default=None)


class ToolListGuard:
    """Remembers the ids of `tools/list` requests sent, and filters their answers."""

    def __init__(self, on_drop: Callable[[str], None]) -> None:
        self._pending: set[Any] = set()
        self._on_drop = on_drop

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "tools/list":
            self._pending.add(message.id)

    def received(self, item: Any) -> Any:
        message = getattr(item, "message", None)
        if not isinstance(message, mcp_types.JSONRPCResponse) or message.id not in self._pending:
            return item
        self._pending.discard(message.id)
        tools = message.result.get("tools") if isinstance(message.result, dict) else None
        if not isinstance(tools, list):
            return item
        kept = []
        for index, tool in enumerate(tools):
            try:
                mcp_types.Tool.model_validate(tool)
            except ValidationError as exc:
                name = tool.get("name") if isinstance(tool, dict) else None
                error = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in error["loc"])
                self._on_drop(
                    f"tool {name!r} (#{index + 1} in tools/list) was left out: "
                    f"{where}: {error['msg']}"
                    if isinstance(name, str)
                    else f"tool #{index + 1} in tools/list was left out: {where}: {error['msg']}"
                )
                continue
            kept.append(tool)
        if len(kept) == len(tools):
            return item
        result = {**message.result, "tools": kept}
        return SessionMessage(
            message=message.model_copy(update={"result": result}), metadata=item.metadata
        )


class SurrogateRepair:
    """Turns a line refused only for lone surrogates back into its message (see above)."""

    def sent(self, item: Any) -> None:
        pass

    def received(self, item: Any) -> Any:
        if not isinstance(item, ValidationError) or item.error_count() != 1:
            return item
        error = item.errors()[0]
        line = error.get("input")
        if error["type"] != "json_invalid" or not isinstance(line, str) or "\\u" not in line:
            return item
        try:
            data, replaced = without_surrogates(loads(line, LINE_DEPTH))
            if not replaced:  # refused for something else: left for the session to report
                return item
            return SessionMessage(
                mcp_types.jsonrpc_message_adapter.validate_python(data, by_name=False)
            )
        except ValueError:  # not JSON, or not JSON-RPC: as the SDK found
            return item


class Tap(Protocol):
    """Sees each message on its way: `sent` going out, `received` (which may replace
    it) coming in."""

    def sent(self, item: Any) -> None: ...

    def received(self, item: Any) -> Any: ...


class WatchedReader:
    """The transport's read stream, calling `on_end` once when it ends; what comes in
    passes through `taps` in order."""

    def __init__(self, inner: Any, on_end: Callable[[], None], taps: Sequence[Tap]) -> None:
        self._inner = inner
        self._on_end = on_end
        self._taps = taps
        self._ended = False

    def __getattr__(self, name: str) -> Any:  # `last_context` and the like
        return getattr(self._inner, name)

    async def __aenter__(self) -> WatchedReader:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> WatchedReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return self._tapped(await self._inner.__anext__())
        except (StopAsyncIteration, anyio.EndOfStream, anyio.ClosedResourceError):
            self._end()
            raise

    async def receive(self) -> Any:
        try:
            return self._tapped(await self._inner.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._end()
            raise

    def _tapped(self, item: Any) -> Any:
        for tap in self._taps:
            item = tap.received(item)
        return item

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._on_end()


class CancelReasonWriter:
    """The transport's write stream, giving cancellations the caller's reason; what
    goes out is shown to `taps` as it is sent."""

    def __init__(self, inner: Any, taps: Sequence[Tap]) -> None:
        self._inner = inner
        self._taps = taps

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> CancelReasonWriter:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    async def send(self, item: SessionMessage) -> None:
        item = with_reason(item)
        for tap in self._taps:
            tap.sent(item)
        await self._inner.send(item)


def with_reason(item: SessionMessage) -> SessionMessage:
    """`item`, or a copy whose cancellation carries the current call's reason."""
    call = current_call.get()
    message = item.message
    if (
        call is None
        or call.reason is None
        or not isinstance(message, mcp_types.JSONRPCNotification)
        or message.method != "notifications/cancelled"
    ):
        return item
    params = {**(message.params or {}), "reason": call.reason}
    return SessionMessage(
        message=message.model_copy(update={"params": params}), metadata=item.metadata
    )
