"""The client's terminals (`terminal/*`): commands the agent runs through the workbench.

A terminal is judged as `run_command(command=...)` would be (`served.judge`), runs
in the workspace with the environment `run_command` gives a command (its allow-list,
plus the variables the agent sets), in a process tree of its own that is ended on
`terminal/kill`, `terminal/release` and when the run stops. Its output is kept (up
to the agent's byte limit, cut at the start as the protocol says) and shown live in
the call whose content names the terminal.
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from workbench.acp.served import _refuse, judge
from workbench.proctree import ProcessTree
from workbench.tools.command_env import command_env

if TYPE_CHECKING:
    from workbench.acp.run import AcpRun

DEFAULT_LIMIT = 1024 * 1024
TREE_GRACE = 1.0
_ids = itertools.count(1)


@dataclass
class Terminal:
    id: str
    command: str
    process: asyncio.subprocess.Process
    tree: ProcessTree
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exit_code: int | None = None
    signal: str | None = None
    exited: anyio.Event = field(default_factory=anyio.Event)

    def append(self, data: bytes) -> None:
        self.output += data
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1  # never start inside a UTF-8 character
            del self.output[:cut]
            self.truncated = True

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")


class Terminals:
    def __init__(self, run: AcpRun) -> None:
        self.run = run
        self.open: dict[str, Terminal] = {}
        self._released: dict[str, Terminal] = {}
        """Released terminals: their output stays shown in the calls that had them."""

    async def create(
        self,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_kwargs: Any,
    ) -> Any:
        from acp.schema import CreateTerminalResponse

        line = shlex.join([command, *args]) if args else command
        await judge(self.run, "run_command", {"command": line}, f"run {line}")
        workspace = self.run.options.workspace
        where = workspace
        if cwd:
            from workbench.tools.workspace import Workspace, WorkspaceError

            try:
                where = Workspace(workspace).resolve(cwd)
            except (WorkspaceError, OSError) as exc:
                raise _refuse(str(exc)) from None
        extra = {}
        for var in env or []:
            item = var if isinstance(var, dict) else var.model_dump()
            extra[str(item["name"])] = str(item["value"])
        tree = ProcessTree("acp-term")
        environ = tree.env({**command_env(self.run.pass_env), **extra})
        argv = [command, *args] if args else ["/bin/sh", "-c", command]
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=str(where),
                env=environ,
                start_new_session=True,
            )
        except OSError as exc:
            raise _refuse(f"cannot run {line}: {exc.strerror or exc}") from None
        tree.adopt(process.pid)
        terminal = Terminal(
            f"term-{next(_ids)}", line, process, tree, output_byte_limit or DEFAULT_LIMIT
        )
        self.open[terminal.id] = terminal
        asyncio.ensure_future(self._pump(terminal))
        return CreateTerminalResponse(terminal_id=terminal.id)

    async def _pump(self, terminal: Terminal) -> None:
        stdout = terminal.process.stdout
        assert stdout is not None
        while chunk := await stdout.read(4096):
            terminal.append(chunk)
            self._touch(terminal.id)
        code = await terminal.process.wait()
        terminal.exit_code, terminal.signal = (code, None) if code >= 0 else (None, f"{-code}")
        terminal.exited.set()
        self._touch(terminal.id)

    def _touch(self, terminal_id: str) -> None:
        """Wake the calls whose content shows this terminal (their live output)."""
        for call in self.run.calls.values():
            if any(c.get("terminalId") == terminal_id for c in call.content):
                call.touch()

    def _get(self, terminal_id: str) -> Terminal:
        terminal = self.open.get(terminal_id)
        if terminal is None:
            raise _refuse(f"No terminal {terminal_id!r} (released, or never created)")
        return terminal

    def output_of(self, terminal_id: str) -> str | None:
        terminal = self.open.get(terminal_id) or self._released.get(terminal_id)
        return None if terminal is None else terminal.text

    def output(self, terminal_id: str) -> Any:
        from acp.schema import TerminalExitStatus, TerminalOutputResponse

        terminal = self._get(terminal_id)
        status = None
        if terminal.exited.is_set():
            status = TerminalExitStatus(exit_code=terminal.exit_code, signal=terminal.signal)
        return TerminalOutputResponse(
            output=terminal.text, truncated=terminal.truncated, exit_status=status
        )

    async def wait(self, terminal_id: str) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        terminal = self._get(terminal_id)
        await terminal.exited.wait()
        return WaitForTerminalExitResponse(exit_code=terminal.exit_code, signal=terminal.signal)

    async def kill(self, terminal_id: str) -> Any:
        from acp.schema import KillTerminalResponse

        terminal = self._get(terminal_id)
        await terminal.tree.end(TREE_GRACE)
        return KillTerminalResponse()

    async def release(self, terminal_id: str) -> Any:
        from acp.schema import ReleaseTerminalResponse

        if terminal_id in self._released:  # the agent's release and the run's end may race
            return ReleaseTerminalResponse()
        terminal = self._get(terminal_id)
        self._released[terminal_id] = self.open.pop(terminal_id)
        await terminal.tree.end(TREE_GRACE)
        return ReleaseTerminalResponse()

    async def release_all(self) -> None:
        for terminal_id in list(self.open):
            terminal = self.open.pop(terminal_id, None)
            if terminal is not None:
                self._released[terminal_id] = terminal
                await terminal.tree.end(TREE_GRACE)
