"""A server cannot flood the workbench: an answer line over the cap fails only its
call (saying the size and the cap), a storm of `tools/list_changed` re-lists once or
twice, and a list that pages forever is cut with a warning."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage

from workbench.agent import AbortController
from workbench.mcp import McpHub, McpServerConfig
from workbench.mcp import stdio as bounded
from workbench.mcp.client import McpCallError, McpConnection
from workbench.mcp.listing import MAX_PAGES
from workbench.mcp.stdio import LineTooLong, oversized, read_lines

HOSTILE = Path(__file__).parent / "servers" / "hostile.py"


@asynccontextmanager
async def started(*flags: str) -> AsyncIterator[McpHub]:
    hub = McpHub([McpServerConfig(name="hostile", command=(sys.executable, str(HOSTILE), *flags))])
    with anyio.fail_after(60):
        await hub.start()
        try:
            yield hub
        finally:
            await hub.aclose()


class Chunks:
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    def __aiter__(self) -> Chunks:
        return self

    async def __anext__(self) -> bytes:
        if not self.chunks:
            raise StopAsyncIteration
        return self.chunks.pop(0)


async def test_lines_are_cut_at_newlines_across_chunks_and_long_ones_reported() -> None:
    chunks = Chunks(b'{"a":', b"1}\n{", b'"id":7,"x":"', b"y" * 50, b'"}\n\n', b"tail")
    got = [line async for line in read_lines(chunks, cap=40)]
    assert got[0] == b'{"a":1}'
    size, head, tail = got[1]  # type: ignore[misc]
    assert size == len(b'{"id":7,"x":""}') + 50
    assert head.startswith(b'{"id":7') and tail.endswith(b'"}')
    assert got[2:] == [b"", b"tail"]


def test_a_line_over_the_cap_answers_its_request_with_an_error_naming_the_cap() -> None:
    first = oversized(10_000, b'{"jsonrpc":"2.0","id":5,"result":{', b"}}", 100)
    last = oversized(10_000, b'{"result":{"content"', b'"]},"jsonrpc":"2.0","id":"r-1"}', 100)
    for message, request_id in ((first, 5), (last, "r-1")):
        assert isinstance(message, SessionMessage)
        error = message.message
        assert isinstance(error, mcp_types.JSONRPCError) and error.id == request_id
        assert "one message of 10,000 bytes, over the workbench's cap of 100 bytes" in (
            error.error.message
        )
    assert isinstance(oversized(10_000, b'{"method":"x"', b"}", 100), LineTooLong)


async def test_an_answer_over_the_cap_fails_its_call_and_the_server_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bounded, "MAX_LINE_BYTES", 1_000_000)
    async with started() as hub:
        connection = hub.connections[0]
        with pytest.raises(McpCallError) as failed:
            await connection.call_tool("big", {"megabytes": 3})
        assert "one message of 3,000,0" in str(failed.value)
        assert "over the workbench's cap of 1,000,000 bytes (MAX_LINE_BYTES)" in str(failed.value)
        result = await connection.call_tool("big", {"megabytes": 0.5})
        assert len(result.content[0].text) == 500_000  # type: ignore[union-attr]
        assert connection.status == "ready"


async def test_a_storm_of_list_changed_relists_once_or_twice_and_says_it_once() -> None:
    async with started() as hub:
        connection: McpConnection = hub.connections[0]
        relists = 0
        listing = connection.relist_tools

        async def counted() -> None:
            nonlocal relists
            relists += 1
            await listing()

        connection.relist_tools = counted  # type: ignore[method-assign]
        said: list[object] = []
        hub.on_tools_changed = lambda *change: said.append(change)
        result = await connection.call_tool("storm", {"count": 10_000})
        assert result.content[0].text == "sent 10000"  # type: ignore[union-attr]
        assert 1 <= relists <= 3
        assert said == []  # the list is the same: nothing to say but a log line
        assert "tools/list_changed: listed again, nothing changed" in connection.log


async def test_cancelling_a_call_during_a_storm_returns_at_once() -> None:
    async with started() as hub:
        connection = hub.connections[0]
        controller = AbortController()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def cancel_soon() -> None:
                    await anyio.sleep(0.3)
                    controller.abort("enough")

                tg.start_soon(cancel_soon)
                with pytest.raises(McpCallError) as failed:
                    await connection.call_tool(
                        "storm", {"count": 1_000_000}, signal=controller.signal
                    )
        assert failed.value.details.get("aborted") is True


async def test_a_list_that_pages_forever_is_cut_with_a_warning() -> None:
    async with started("--endless-pages") as hub:
        connection = hub.connections[0]
        assert connection.status == "ready"
        assert [t.name for t in connection.tools][:2] == ["chatter", "spawn"]
        warning = f"tools/list still gave a next page after {MAX_PAGES} pages"
        assert any(warning in line for line in connection.dropped)
        assert any(warning in line for line in hub.report()[0].splitlines())
