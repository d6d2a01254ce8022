"""The stdio transport, with the server's output read in linear time and bounded.

The SDK's `stdio_client` joins what it has of a line with each new chunk and splits
the whole again, so one line of n bytes costs O(n²/chunk) (a 40 MB answer took about
40 s and froze every other server's messages meanwhile), and it keeps a line however
long it gets. `stdio_client` here is the SDK's, with its pieces (process start in its
own group, the writer, the bounded shutdown), but reads bytes and keeps a line's
pieces until its newline (each byte is looked at once), up to `MAX_LINE_BYTES`.

A line longer than that is read to its end and dropped, keeping only its first and
last few kilobytes: when they show the message's `id`, the request gets an error
answer naming the size and the cap (its call fails, the run goes on); otherwise it
counts as a line that is not JSON-RPC (the calls waiting are failed, saying why).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import mcp_types
from mcp.client import stdio as sdk
from mcp.shared.message import SessionMessage

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message a stdio server may send (one line of JSON)."""
_KEEP = 4096
"""Bytes kept of each end of a line over the cap (to find its `id`)."""
_ID = r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")'
_ID_FIRST = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?' + _ID.encode())
_ID_LAST = re.compile(_ID.encode() + rb"\s*\}\s*$")


class LineTooLong(ValueError):
    """A line over the cap (when its `id` could not be found)."""


async def read_lines(stream: Any, cap: int) -> AsyncIterator[bytes | tuple[int, bytes, bytes]]:
    """Each line of `stream` (without its newline), or for a line over `cap` bytes
    (size, first bytes, last bytes)."""
    pieces: list[bytes] = []
    size = 0
    head: bytes | None = None  # set once the line is over the cap
    tail = b""
    async for chunk in stream:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            part = chunk[start:] if end < 0 else chunk[start:end]
            size += len(part)
            if head is None and size > cap:
                head = b"".join([*pieces, part])[:_KEEP]
                pieces = []
            if head is None:
                pieces.append(part)
            else:
                tail = (tail + part[-_KEEP:])[-_KEEP:]
            if end < 0:
                break
            if head is None:
                yield b"".join(pieces)
            else:
                yield (size, head, tail)
            pieces, size, head, tail = [], 0, None, b""
            start = end + 1
    if pieces and any(pieces):
        yield b"".join(pieces)


def oversized(size: int, head: bytes, tail: bytes, cap: int) -> SessionMessage | Exception:
    """What a line over the cap becomes: an error answer to its request if its `id`
    shows, else a parse failure that says why."""
    why = (
        f"the server sent one message of {size:,} bytes, over the workbench's cap of "
        f"{cap:,} bytes (MAX_LINE_BYTES) for one message: it was dropped"
    )
    found = _ID_FIRST.search(head) or _ID_LAST.search(tail)
    if found is None:
        return LineTooLong(why)
    request_id = json.loads(found.group(1))
    error = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=why)
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@asynccontextmanager
async def stdio_client(
    server: sdk.StdioServerParameters,
    errlog: TextIO,
    cap: int | None = None,
    started: Any = None,
) -> AsyncGenerator[tuple[Any, Any], None]:
    """Start the server's process (or take `started`, one already running: see
    `early`); yield its (read, write) streams (see above); `cap` is `MAX_LINE_BYTES`
    unless given."""
    cap = MAX_LINE_BYTES if cap is None else cap
    process = started
    if process is None:
        command = await sdk._get_executable_command(server.command)
        process = await sdk._create_platform_compatible_process(
            command=command,
            args=server.args,
            env=sdk.get_default_environment() | (server.env or {}),
            errlog=errlog,
            cwd=server.cwd,
        )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                try:
                    async for line in read_lines(process.stdout, cap):
                        if isinstance(line, tuple):
                            item: Any = oversized(*line, cap)
                        else:
                            text = line.decode(server.encoding, server.encoding_error_handler)
                            item = sdk._parse_line(text)
                        try:
                            await read_writer.send(item)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
                finally:
                    await sdk._drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # the pipe closed under the read: the session sees the stream end

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    encoded = (data + "\n").encode(server.encoding, server.encoding_error_handler)
                    await process.stdin.send(encoded)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
