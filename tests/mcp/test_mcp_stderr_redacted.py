"""An MCP server's stderr is redacted like every other text (issue 36).

A server is given a secret (its env) and prints it on stderr whole, in pieces on
separate lines, folded four characters a line, and reversed. The stderr view (F7),
the lines the hub keeps after the server stopped, and the failure message that
ends with them hold no run of 8 characters of it, forwards or reversed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from tests.mcp.helpers import SERVERS, TEST_TIMEOUT, scripted
from workbench.agent import Agent
from workbench.mcp import McpHub, McpServerConfig, resolve_servers
from workbench.mcp.stderr import STDERR_KEPT_LINES
from workbench.redact import PIECE, redactor_for
from workbench.widgets.mcp_servers import server_details

SECRET = "sk-live-9fQ2xLm7Rt4Wz8Kp3Vb6Nc1Hd5Jg0Ys"

LEAK = """
import os, runpy, sys
s = os.environ["LEAKY_API_TOKEN"]
err = sys.stderr
print("starting with", s, file=err)
print("head", s[:13], file=err)
print(s[13:26], file=err)
print(s[26:], "tail", file=err)
for i in range(0, len(s), 4):
    print(s[i:i + 4], file=err)
print("backwards", s[::-1], file=err)
print("middle", s[7:23][::-1], file=err)
err.flush()
if sys.argv[1:] == ["crash"]:
    sys.exit(3)
sys.argv = [sys.argv[0]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _server(name: str, crash: bool) -> McpServerConfig:
    command = [sys.executable, "-c", LEAK.replace("sys.argv[0]", repr(str(SERVERS / "toolbox.py")))]
    return McpServerConfig(
        name=name,
        command=(*command, "crash") if crash else tuple(command),
        env={"LEAKY_API_TOKEN": SECRET},
    )


def leaked(text: str) -> list[str]:
    """Every run of PIECE characters of the secret, forwards or reversed, in `text`
    (whitespace ignored, as a reader joining the lines would)."""
    compact = "".join(text.split())
    runs = [SECRET[i : i + PIECE] for i in range(len(SECRET) - PIECE + 1)]
    return [run for run in runs if run in compact or run[::-1] in compact]


async def test_a_running_server_that_prints_its_secret_on_stderr_shows_none_of_it() -> None:
    config = _server("leaky", crash=False)
    provider = scripted({"text": "done"})
    agent = Agent(stream_fn=provider, model=provider.model)
    hub = McpHub(resolve_servers([], configured=[config]))
    hub.mask(redactor_for(None, [config]))
    with anyio.fail_after(TEST_TIMEOUT):
        async with hub.attach(agent):
            connection = hub.connection("leaky")
            assert connection.status == "ready"
            while len(connection.stderr_lines(STDERR_KEPT_LINES)) < 5:
                await anyio.sleep(0.01)  # the child's stderr file fills as it starts
            running = connection.stderr_lines(STDERR_KEPT_LINES)
            view = server_details(connection, []).plain
    stopped = connection.stderr_lines(STDERR_KEPT_LINES)
    assert "[REDACTED:leaky env LEAKY_API_TOKEN]" in "\n".join(running)
    assert any(line.startswith("backwards ") for line in running)
    for text in ("\n".join(running), view, "\n".join(stopped)):
        assert leaked(text) == []
        assert SECRET not in text
    assert stopped == running  # what is kept after the stop is the same, still redacted


async def test_a_server_that_dies_printing_its_secret_fails_with_none_of_it() -> None:
    config = _server("leaky", crash=True)
    provider = scripted({"text": "done"})
    agent = Agent(stream_fn=provider, model=provider.model)
    hub = McpHub(resolve_servers([], configured=[config]))
    hub.mask(redactor_for(None, [config]))
    with anyio.fail_after(TEST_TIMEOUT):
        async with hub.attach(agent):
            connection = hub.connection("leaky")
            assert connection.status == "failed"
            error = connection.error or ""
            view = server_details(connection, []).plain
    assert "Its last stderr lines:" in error
    assert "[REDACTED:" in error
    for text in (error, view, "\n".join(connection.stderr_lines(STDERR_KEPT_LINES))):
        assert leaked(text) == [], text


def test_the_checker_sees_a_leak() -> None:
    # the helper the tests above rely on finds pieces split by lines and reversed
    assert leaked("x " + SECRET[3:11] + " y") == [SECRET[3:11]]
    assert leaked(SECRET[20:24] + "\n" + SECRET[24:28]) == [SECRET[20:28]]
    assert leaked(SECRET[::-1][:PIECE]) == [SECRET[-PIECE:]]
    assert Path(SERVERS / "toolbox.py").is_file()
