"""Stdio servers started before the MCP SDK is loaded, so they boot while it loads.

Loading the SDK takes the workbench about as long as a Node server takes to boot, and
the SDK was needed before a server could be started: the first turn waited for both,
one after the other. `start_early` starts each stdio server's process with the
standard library alone, as the SDK would (its own session, the SDK's default
environment plus the server's own, stderr to a temporary file); the connection then
adopts it (`take_early`) and speaks to it through `EarlyProcess`, an anyio `Process`
over its pipes. A process nobody adopts is killed at exit like any server's
(`transports.LIVE_TREES`).

Nothing here imports the SDK.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any, TextIO

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from workbench.mcp.config import McpServerConfig, resolve_servers
from workbench.proctree import ProcessTree

_WINDOWS = "APPDATA HOMEDRIVE HOMEPATH LOCALAPPDATA PATH PATHEXT PROCESSOR_ARCHITECTURE"
_WINDOWS += " SYSTEMDRIVE SYSTEMROOT TEMP USERNAME USERPROFILE"
INHERITED: tuple[str, ...] = tuple(
    (_WINDOWS if sys.platform == "win32" else "HOME LOGNAME PATH SHELL TERM USER").split()
)
"""The SDK's `DEFAULT_INHERITED_ENV_VARS` (a test keeps the two equal)."""

Key = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], str | None]
_EARLY: dict[Key, tuple[subprocess.Popen[bytes], TextIO, ProcessTree]] = {}
_at_exit: list[bool] = []


def _key(config: McpServerConfig) -> Key:
    assert config.command is not None
    return (config.name, config.command, tuple(sorted(config.env.items())), config.cwd)


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_before: dict[int, Any] = {}
"""The handlers the signals had before `start_early` put `_stopped` there."""


def _stopped(signum: int, _frame: Any) -> None:
    """A signal that comes before the workbench listens for it (while it loads): the
    servers started early end with it, as they would once it listens."""
    _kill_unadopted()
    transports = sys.modules.get("workbench.mcp.transports")
    if transports is not None:
        transports.kill_server_trees()
    name = signal.Signals(signum).name
    print(
        f"workbench: stopped by {name} while the MCP servers were starting; "
        "the MCP servers were stopped",
        file=sys.stderr,
        flush=True,
    )
    os._exit(130)


def _listen_early() -> None:
    for each in _SIGNALS:
        _before.setdefault(each, signal.signal(each, _stopped))


def _stop_listening() -> None:
    """Give the signals back, where nobody has taken them since (the event loop's
    handlers stay)."""
    for each, handler in list(_before.items()):
        if signal.getsignal(each) is _stopped:
            signal.signal(each, handler)
        del _before[each]


def _kill_unadopted() -> None:
    """At exit: end every process started early that no connection took."""
    for _process, _stderr, tree in _EARLY.values():
        tree.kill()
    _EARLY.clear()
    _stop_listening()


def default_environment() -> dict[str, str]:
    """What the SDK's `get_default_environment` gives: the inherited variables, set."""
    return {
        key: value
        for key in INHERITED
        if (value := os.environ.get(key)) is not None and not value.startswith("()")
    }


def start_early_for(options: Any) -> None:
    """`start_early` for the servers of a run's options (`RunOptions`), named as the
    runtime's hub will name them."""
    if options.mcp or options.mcp_urls or options.mcp_servers:
        start_early(resolve_servers(options.mcp, options.mcp_urls, options.mcp_servers))


def start_early(servers: list[McpServerConfig]) -> None:
    """Start the process of each enabled stdio server (one whose inputs are given): a
    server that cannot start here starts later, as usual, and says why then."""
    for config in servers:
        if config.command is None or not config.enabled or config.inputs:
            continue
        if _key(config) in _EARLY:
            continue
        tree = ProcessTree(f"mcp-{config.name}")
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        try:
            process = subprocess.Popen(
                list(config.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=default_environment() | tree.env(dict(config.env)),
                cwd=config.cwd,
                start_new_session=True,
            )
        except OSError:
            stderr.close()
            continue
        tree.adopt(process.pid)  # before its exec, it does not carry the tree's mark yet
        if not _at_exit:
            atexit.register(_kill_unadopted)
            _at_exit.append(True)
        _EARLY[_key(config)] = (process, stderr, tree)
    if _EARLY and threading.current_thread() is threading.main_thread():
        _listen_early()


def take_early(config: McpServerConfig) -> tuple[EarlyProcess, TextIO, ProcessTree] | None:
    """The process started early for `config`, if any and still running (once)."""
    if config.command is None:
        return None
    found = _EARLY.pop(_key(config), None)
    if not _EARLY:
        _stop_listening()
    if found is None:
        return None
    process, stderr, tree = found
    if process.poll() is not None:  # it died already: start it again, as usual
        stderr.close()
        return None
    return EarlyProcess(process), stderr, tree


def _close(stream: _Reader | _Writer) -> None:
    """Close the stream's descriptor, waking a task that waits on it (it raises
    `ClosedResourceError`, as a closed anyio stream does)."""
    if stream.fd >= 0:
        fd, stream.fd = stream.fd, -1
        anyio.notify_closing(fd)
        os.close(fd)


class _Reader(ByteReceiveStream):
    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self.fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self.fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        _close(self)


class _Writer(ByteSendStream):
    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self.fd < 0:
                raise anyio.ClosedResourceError
            try:
                view = view[os.write(self.fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
            except BrokenPipeError:
                raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        _close(self)


class EarlyProcess(Process):
    """An anyio `Process` over a `subprocess.Popen` started before the event loop."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._stdin = _Writer(os.dup(process.stdin.fileno()))
        self._stdout = _Reader(os.dup(process.stdout.fileno()))
        process.stdin.close()
        process.stdout.close()

    async def wait(self) -> int:
        while (code := self._process.poll()) is None:
            await anyio.sleep(0.01)
        return code

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def send_signal(self, sig: signal.Signals) -> None:
        self._process.send_signal(sig)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> None:
        return None

    async def aclose(self) -> None:
        await self._stdin.aclose()
        await self._stdout.aclose()
        await self.wait()
