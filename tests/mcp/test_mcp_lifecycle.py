"""A server's life after it started: it dies while idle (noticed at once, and it can be
restarted), an aborted call tells the server why, an HTTP endpoint that refuses says
how, and a result's text blocks stay apart."""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import anyio
import pytest

from tests.mcp.helpers import SERVERS, TOOLBOX, calls, mcp_run
from workbench.agent import AbortController
from workbench.mcp.client import McpConnection
from workbench.mcp.config import server_from_url
from workbench.providers.openai_messages import tool_message

GARBAGE = shlex.join([sys.executable, str(SERVERS / "garbage.py")])


async def test_text_blocks_reach_the_model_and_the_screen_apart() -> None:
    async with mcp_run(calls(("toolbox__two_blocks", {}))) as run:
        await run.agent.prompt("go")
        result = run.result("toolbox__two_blocks")
        assert result.text == "first block:\nsecond"
        assert tool_message(result)["content"] == "first block:\nsecond"
        # what the server said about the second block, kept for the inspector
        assert result.details["annotations"] == [
            {"block": 2, "audience": ["user"], "priority": 0.9}
        ]


async def test_a_server_that_dies_while_idle_is_noticed_at_once_and_restarts() -> None:
    async with mcp_run(calls(("toolbox__exit_soon", {"after": 0.1}))) as run:
        changed: list[str] = []
        exited = anyio.Event()

        def on_change(connection: McpConnection) -> None:
            changed.append(connection.status)
            exited.set()

        run.hub.on_change = on_change
        await run.agent.prompt("go")
        assert run.result("toolbox__exit_soon").text == "exiting soon"
        with anyio.fail_after(10):
            await exited.wait()  # no call is needed to notice it
        connection = run.hub.connection("toolbox")
        assert changed == ["exited"] and connection.status == "exited"
        assert connection.error is not None
        assert connection.error.startswith("it exited while idle")
        assert "toolbox: exiting while idle" in connection.error  # its last stderr line
        assert run.hub.report()[0].startswith("MCP server toolbox exited: it exited while idle")
        old = {t.name: t for t in run.agent.state.tools if t.source == "mcp:toolbox"}

        await run.hub.restart("toolbox")
        assert connection.status == "ready" and connection.error is None
        fresh = {t.name: t for t in run.agent.state.tools if t.source == "mcp:toolbox"}
        assert fresh.keys() == old.keys()
        assert not set(map(id, fresh.values())) & set(map(id, old.values()))
        assert len(run.agent.state.tools) == len({t.name for t in run.agent.state.tools})
        result = await connection.call_tool("two_blocks", {})
        assert [c.text for c in result.content] == ["first block:", "second"]  # type: ignore[union-attr]
        await run.hub.restart("toolbox")  # a running one (wedged, perhaps) restarts too
        assert connection.status == "ready"


async def test_an_aborted_call_sends_the_users_reason() -> None:
    async with mcp_run(servers=[GARBAGE]) as run:
        connection = run.hub.connection("garbage")
        controller = AbortController()

        async def abort_soon() -> None:
            await anyio.sleep(0.3)
            controller.abort("Cancelled by the user (F8)")

        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_soon)
            with pytest.raises(Exception, match="Operation aborted: Cancelled by the user"):
                await connection.call_tool("hang", {}, signal=controller.signal)
        with anyio.fail_after(5):
            while "cancelled:" not in connection._stderr_tail():
                await anyio.sleep(0.05)
        assert "cancelled: Cancelled by the user (F8)" in connection._stderr_tail()


class _Refusing(BaseHTTPRequestHandler):
    def log_message(self, *_args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - the handler's protocol
        first = self.path.strip("/").split("/")[0]
        code = int(first) if first.isdigit() else 404  # OAuth discovery finds nothing
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": "no"}')

    do_GET = do_POST


@pytest.fixture
def refusing_port() -> Iterator[int]:
    server = HTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (401, "answered HTTP 401 Unauthorized: the server wants credentials"),
        (403, "answered HTTP 403 Forbidden: the server refused the credentials"),
        (404, "answered HTTP 404 Not Found: there is no streamable-HTTP MCP endpoint"),
        (500, "answered HTTP 500 Internal Server Error: the server failed"),
    ],
)
async def test_an_http_endpoint_that_refuses_says_how(
    refusing_port: int, status: int, says: str
) -> None:
    url = f"http://127.0.0.1:{refusing_port}/{status}/mcp"
    connection = McpConnection(server_from_url(url))
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        with anyio.fail_after(10):
            await connection.wait_settled()
        connection.stop()
    assert connection.status == "failed"
    assert connection.error == f"{url} {says}" or (
        connection.error is not None and connection.error.startswith(f"{url} {says}")
    )
    assert connection.name == f"127-0-0-1-{refusing_port}"


async def test_nothing_listening_says_so() -> None:
    connection = McpConnection(server_from_url("http://127.0.0.1:9/mcp"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        with anyio.fail_after(10):
            await connection.wait_settled()
        connection.stop()
    assert connection.error is not None
    assert connection.error.startswith("nothing answered at http://127.0.0.1:9/mcp")
    assert connection.error.endswith("is the server running?")


async def test_a_second_toolbox_keeps_its_own_name() -> None:
    async with mcp_run(servers=[TOOLBOX, TOOLBOX]) as run:
        assert [c.name for c in run.hub.connections] == ["toolbox", "toolbox-2"]
