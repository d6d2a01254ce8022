"""`run_command`: a shell command in the workspace, its output streamed as it arrives.

The command runs under `bash -c` (or `sh -c`) in the workspace root, in a new
session, with an allow-listed environment (`workbench.tools.command_env`: no API keys). Its
processes form a `workbench.proctree.ProcessTree`: when the call ends (exit,
timeout or abort) every process of the tree is ended (SIGTERM, then SIGKILL after
`TERM_GRACE`), including background ones and those that left the process group
with `setsid` or a double fork, so a call never outlives its result.

stdout and stderr lines reach `on_update` as they are read (every
`STREAM_INTERVAL`, then every `UPDATE_INTERVAL` once `STREAM_BYTES` have been
streamed); each update carries the output so far and, in `details`, the stream and
the new lines. Output is read in linear time and held in bounded memory: the
result keeps the first `HEAD_LINES` lines and the last `MAX_LINES` lines /
`MAX_BYTES` bytes, with a line saying how many lines and bytes were left out; a
line longer than `LINE_CHARS` keeps its start and end. A non-zero exit, a timeout
or an abort raises `CommandFailed`, whose message ends with the output and whose
`details` carry the exit code, as pi's bash tool reports failures. The command is
NOT confined to the workspace: the permission gate is what guards it, which is why
the tool is `execution_mode="sequential"`.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import signal as signals
import time
from collections import deque
from collections.abc import Iterable
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.proctree import ProcessTree
from workbench.tools.command_env import command_env
from workbench.tools.workspace import Workspace

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 3600.0
HEAD_LINES = 100
HEAD_BYTES = 10 * 1024
"""The first lines of the output, shown whatever follows."""
MAX_LINES = 2000
"""Most output lines a result (or an update) shows: the last ones (after the head)."""
MAX_BYTES = 50 * 1024
"""Most output bytes a result (or an update) shows: the last ones (after the head)."""
LINE_CHARS = 20 * 1024
"""A longer line keeps its start and its end, with a notice between them."""
STREAM_BYTES = 1024 * 1024
"""Output streamed line by line in updates; past this, updates come at most every
`UPDATE_INTERVAL` seconds and carry the output so far without the new lines."""
STREAM_INTERVAL = 0.05
UPDATE_INTERVAL = 1.0
"""Seconds between updates: while streaming line by line, and past `STREAM_BYTES`."""
TERM_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL (below the loop's default abort grace of 2 s)."""
EOF_GRACE = 0.5
"""Seconds to wait for the pipes to close after the shell exited before ending stragglers."""
WATCH_INTERVAL = 0.25
"""Seconds between looks at the command's descendants while it runs."""

Ending = Literal["exited", "timeout", "aborted"]


class RunCommandParams(BaseModel):
    command: str = Field(description="Shell command to run (bash) in the workspace root")
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        description=f"Seconds before the command is killed (default {DEFAULT_TIMEOUT:g})",
    )


class CommandFailed(RuntimeError):
    """The command exited non-zero, timed out or was aborted. `details` keeps the facts."""

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details


class _Output:
    """The combined output, in arrival order: its first lines and its last ones.

    Memory is bounded (HEAD_* plus MAX_* plus one line of at most LINE_CHARS) and
    the cost is linear in the output's size, whatever its shape.
    """

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_bytes = 0
        self.lines: deque[str] = deque()
        self.kept_bytes = 0
        self.left_out = 0
        """Lines between the head and the tail that were dropped."""
        self.total_lines = 0
        self.total_bytes = 0
        """Bytes the command wrote, as read from its pipes."""
        self.counts = {"stdout": 0, "stderr": 0}

    def add(self, stream: str, lines: list[str]) -> None:
        for line in lines:
            cost = len(line.encode("utf-8", "surrogateescape")) + 1
            self.total_lines += 1
            self.counts[stream] += 1
            if (
                not self.left_out
                and not self.lines
                and len(self.head) < HEAD_LINES
                and (self.head_bytes + cost <= HEAD_BYTES)
            ):
                self.head.append(line)
                self.head_bytes += cost
                continue
            self.lines.append(line)
            self.kept_bytes += cost
            while len(self.lines) > 1 and (
                self.kept_bytes > MAX_BYTES or len(self.lines) > MAX_LINES
            ):
                dropped = self.lines.popleft()
                self.kept_bytes -= len(dropped.encode("utf-8", "surrogateescape")) + 1
                self.left_out += 1

    def tail(self) -> tuple[str, int]:
        """The output as shown (head, then tail), and how many lines that is."""
        shown = len(self.head) + len(self.lines)
        return "\n".join([*self.head, *self.lines]), shown

    def text(self) -> str:
        """The output, with a notice in place of the lines left out."""
        if not self.left_out:
            return self.tail()[0]
        notice = (
            f"[... {self.left_out} lines left out: the output was {self.total_lines} lines, "
            f"{self.total_bytes} bytes; showing the first {len(self.head)} and the last "
            f"{len(self.lines)} ...]"
        )
        return "\n".join([*self.head, notice, *self.lines])


class _Line:
    """The line being read: all of it while short, its start and end once too long."""

    __slots__ = ("start", "end", "size")

    def __init__(self) -> None:
        self.start = ""
        self.end = ""
        self.size = 0

    def extend(self, piece: str) -> None:
        if self.size < LINE_CHARS:
            self.start += piece[: LINE_CHARS - len(self.start)]
        if self.size + len(piece) > LINE_CHARS:
            self.end = (self.end + piece)[-(LINE_CHARS // 2) :]
        self.size += len(piece)

    def take(self) -> str:
        """The finished line (shortened in the middle if it was too long); starts anew."""
        if self.size <= LINE_CHARS:
            line = self.start
        else:
            keep = LINE_CHARS // 2
            line = (
                f"{self.start[:keep]}[... {self.size - 2 * keep} characters of this line "
                f"left out ...]{self.end[-keep:]}"
            )
        self.start, self.end, self.size = "", "", 0
        return line


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Wait until the shell itself has exited.

    (`Process.wait()` also waits for the pipes to close, which a background child
    can hold open for as long as it likes.)
    """
    while proc.returncode is None:
        await anyio.sleep(0.02)


async def _watch(tree: ProcessTree, proc: asyncio.subprocess.Process) -> None:
    """Note the command's descendants while it runs, so a detached one stays known."""
    while proc.returncode is None:
        tree.watch()
        await anyio.sleep(WATCH_INTERVAL)


async def _wait_for_end(
    proc: asyncio.subprocess.Process, signal: AbortSignal, timeout: float
) -> Ending:
    ending: Ending = "exited"
    async with anyio.create_task_group() as tg:

        async def on_abort() -> None:
            nonlocal ending
            await signal.wait()
            ending = "aborted"
            tg.cancel_scope.cancel()

        tg.start_soon(on_abort)
        with anyio.move_on_after(timeout) as scope:
            await _exited(proc)
        if scope.cancelled_caught:
            ending = "timeout"
        tg.cancel_scope.cancel()
    return ending


class _Run:
    """One execution: reads both pipes, reports updates, ends the process group."""

    def __init__(self, command: str, on_update: Any, pass_env: tuple[str, ...] = ()) -> None:
        self.command = command
        self.pass_env = pass_env
        self.on_update = on_update
        self.output = _Output()
        self.pipes_closed = anyio.Event()
        self.stragglers_killed = False
        self._open_pipes = 2
        self._pending: list[str] = []
        self._pending_stream = "stdout"
        self._unreported = False
        self._streamed = 0
        self._reported_at = 0.0

    async def pump(self, reader: asyncio.StreamReader, stream: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        line = _Line()
        while True:
            chunk = await reader.read(65536)
            self.output.total_bytes += len(chunk)
            *finished, rest = decoder.decode(chunk, final=not chunk).split("\n")
            lines = []
            for piece in finished:
                line.extend(piece)
                lines.append(line.take().removesuffix("\r"))
            line.extend(rest)
            if not chunk and line.size:
                lines.append(line.take().removesuffix("\r"))
            if lines:
                self.collect(stream, lines)
            if not chunk:
                self._open_pipes -= 1
                if self._open_pipes == 0:
                    self.flush()
                    self.pipes_closed.set()
                return

    def collect(self, stream: str, lines: list[str]) -> None:
        """Add new lines; report them now, or with the next update if one was just sent."""
        if self._pending and self._pending_stream != stream:
            self.flush()  # updates keep the arrival order across the two streams
        self.output.add(stream, lines)
        self._pending_stream = stream
        if self._streamed < STREAM_BYTES:
            self._streamed += sum(len(text) + 1 for text in lines)
            self._pending.extend(lines)
        self._unreported = True
        if time.monotonic() - self._reported_at >= self._interval():
            self.flush()

    def _interval(self) -> float:
        return STREAM_INTERVAL if self._streamed < STREAM_BYTES else UPDATE_INTERVAL

    def flush(self) -> None:
        """Send an update with the output so far and the lines not reported yet."""
        if not self._unreported:
            return
        self._reported_at = time.monotonic()
        lines, self._pending, self._unreported = self._pending, [], False
        details = {
            "stream": self._pending_stream,
            "lines": lines,
            "total_lines": self.output.total_lines,
            "truncated": self.output.left_out > 0,
        }
        self.on_update(AgentToolResult.text(self.output.text(), details=details))

    async def flusher(self) -> None:
        """Sends what `collect` held back, so a line is never kept waiting long."""
        while not self.pipes_closed.is_set():
            with anyio.move_on_after(STREAM_INTERVAL):
                await self.pipes_closed.wait()
            if time.monotonic() - self._reported_at >= self._interval():
                self.flush()

    async def run(self, cwd: str, signal: AbortSignal, timeout: float) -> tuple[Ending, int | None]:
        shell = shutil.which("bash") or "/bin/sh"
        tree = ProcessTree("command")
        env = tree.env({**command_env(self.pass_env), "PYTHONUNBUFFERED": "1"})
        proc = await asyncio.create_subprocess_exec(
            shell,
            "-c",
            self.command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        tree.adopt(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.pump, proc.stdout, "stdout")
                tg.start_soon(self.pump, proc.stderr, "stderr")
                tg.start_soon(self.flusher)
                tg.start_soon(_watch, tree, proc)
                ending = await _wait_for_end(proc, signal, timeout)
                if ending == "exited":
                    with anyio.move_on_after(EOF_GRACE):
                        await self.pipes_closed.wait()
                else:
                    _signal_group(proc.pid, signals.SIGTERM)
                # Whatever is left, in the group or detached from it, ends with the call.
                left = await tree.end(TERM_GRACE)
                _signal_group(proc.pid, signals.SIGKILL)
                self.stragglers_killed = ending == "exited" and left > 0
                await _exited(proc)
                with anyio.move_on_after(TERM_GRACE):
                    await self.pipes_closed.wait()
                tg.cancel_scope.cancel()  # a pipe held by a process out of reach: stop reading
        finally:
            if proc.returncode is None:  # cancelled by the loop: leave nothing behind
                _signal_group(proc.pid, signals.SIGKILL)
                tree.kill()
        return ending, proc.returncode


def make_run_command(workspace: Workspace, pass_env: Iterable[str] = ()) -> AgentTool:
    """Build `run_command` bound to `workspace` (its working directory).

    Args:
        pass_env: environment variables the command gets beyond `command_env`'s allow-list.
    """
    passed = tuple(pass_env)

    async def execute(
        tool_call_id: str, params: RunCommandParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        signal.throw_if_aborted()
        timeout = params.timeout or DEFAULT_TIMEOUT
        started = time.perf_counter()
        run = _Run(params.command, on_update, passed)
        ending, code = await run.run(str(workspace.root), signal, timeout)
        out = run.output
        details: dict[str, Any] = {
            "command": params.command,
            "exit_code": code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "timed_out": ending == "timeout",
            "aborted": ending == "aborted",
            "total_lines": out.total_lines,
            "stdout_lines": out.counts["stdout"],
            "stderr_lines": out.counts["stderr"],
            "truncated": out.tail()[1] < out.total_lines,
            "background_killed": run.stragglers_killed,
        }
        text = out.text()
        if ending == "exited" and code == 0:
            return AgentToolResult.text(text or "(no output)", details=details)
        if ending == "timeout":
            why = f"Command timed out after {timeout:g} seconds and was killed"
        elif ending == "aborted":
            why = "Command aborted"
        else:
            why = f"Command exited with code {code}"
        raise CommandFailed(f"{text}\n\n{why}" if text else why, details)

    return AgentTool(
        name="run_command",
        label="Run command",
        description=(
            "Run a shell command (bash) in the workspace root and return its combined "
            f"stdout and stderr (long output: its first {HEAD_LINES} lines and its last "
            f"{MAX_LINES} lines / {MAX_BYTES // 1024}KB). "
            f"The command is killed after timeout seconds (default {DEFAULT_TIMEOUT:g}). "
            "A non-zero exit code is reported as an error."
        ),
        parameters=RunCommandParams,
        execute=execute,
        execution_mode="sequential",
        source="builtin",
    )
