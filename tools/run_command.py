"""`run_command`: a shell command in the workspace, its output streamed as it arrives.

The command runs under `bash -c` (or `sh -c`) in the workspace root, in a new
session, so it and everything it starts form one process group: a timeout or an
abort ends the whole group (SIGTERM, then SIGKILL after `TERM_GRACE`), not just
the shell. Background processes still holding the output pipes open after the
shell exits are ended the same way, so a call never outlives its result.

stdout and stderr lines reach `on_update` as they are read; each update carries
the output so far (its tail, if long) and, in `details`, the stream and the new
lines. The final result keeps the last `MAX_LINES` lines / `MAX_BYTES` bytes. A
non-zero exit, a timeout or an abort raises `CommandFailed`, whose message ends
with the output tail and whose `details` carry the exit code, as pi's bash tool
reports failures. The command is NOT confined to the workspace: the permission
gate is what guards it, which is why the tool is `execution_mode="sequential"`.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import signal as signals
import time
from collections import deque
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from tools.workspace import Workspace
from workbench.agent import AbortSignal, AgentTool, AgentToolResult

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 3600.0
MAX_LINES = 2000
"""Most output lines a result (or an update) shows: the last ones."""
MAX_BYTES = 50 * 1024
"""Most output bytes a result (or an update) shows: the last ones."""
KEEP_BYTES = 1024 * 1024
"""Output kept in memory; older lines are dropped (and counted) past this."""
TERM_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL (below the loop's default abort grace of 2 s)."""
EOF_GRACE = 0.5
"""Seconds to wait for the pipes to close after the shell exited before ending stragglers."""

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
    """The combined output, in arrival order, bounded in memory."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque()
        self.kept_bytes = 0
        self.total_lines = 0
        self.counts = {"stdout": 0, "stderr": 0}

    def add(self, stream: str, lines: list[str]) -> None:
        for line in lines:
            self.lines.append(line)
            self.kept_bytes += len(line.encode("utf-8")) + 1
            self.total_lines += 1
            self.counts[stream] += 1
        while self.kept_bytes > KEEP_BYTES and len(self.lines) > 1:
            self.kept_bytes -= len(self.lines.popleft().encode("utf-8")) + 1

    def tail(self) -> tuple[str, int]:
        """The last lines within MAX_LINES / MAX_BYTES, and how many lines that is."""
        picked: list[str] = []
        size = 0
        for line in reversed(self.lines):
            cost = len(line.encode("utf-8")) + 1
            if len(picked) >= MAX_LINES or (picked and size + cost > MAX_BYTES):
                break
            picked.append(line[-MAX_BYTES:])
            size += cost
        picked.reverse()
        return "\n".join(picked), len(picked)

    def text(self) -> str:
        """The tail, with a notice when lines were left out."""
        tail, shown = self.tail()
        if shown < self.total_lines:
            return f"[Showing the last {shown} of {self.total_lines} lines]\n{tail}"
        return tail


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


def _group_alive(pgid: int) -> bool:
    """Whether a live (non-zombie) process is left in the group.

    Zombies count as gone: an orphan's zombie lingers until init reaps it, and
    waiting for that would stretch every abort to the full grace period.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                state, _ppid, pgrp = handle.read().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(pgrp) == pgid and state != "Z":
            return True
    return False


async def _end_group(proc: asyncio.subprocess.Process, pipes_closed: anyio.Event) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after TERM_GRACE.

    Children get the whole grace period to clean up, not just the shell: the
    SIGKILL waits until the shell has exited, the pipes are closed and no process
    of the group is left, or until the grace period is over.
    """
    _signal_group(proc.pid, signals.SIGTERM)
    with anyio.move_on_after(TERM_GRACE):
        await _exited(proc)
        await pipes_closed.wait()
        while _group_alive(proc.pid):
            await anyio.sleep(0.02)
    _signal_group(proc.pid, signals.SIGKILL)
    await _exited(proc)


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

    def __init__(self, command: str, on_update: Any) -> None:
        self.command = command
        self.on_update = on_update
        self.output = _Output()
        self.pipes_closed = anyio.Event()
        self.stragglers_killed = False
        self._open_pipes = 2

    async def pump(self, reader: asyncio.StreamReader, stream: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        while True:
            chunk = await reader.read(65536)
            text = pending + decoder.decode(chunk, final=not chunk)
            *lines, pending = text.split("\n")
            if not chunk and pending:
                lines, pending = [*lines, pending], ""
            lines = [line.removesuffix("\r") for line in lines]
            if lines:
                self.output.add(stream, lines)
                self.report(stream, lines)
            if not chunk:
                self._open_pipes -= 1
                if self._open_pipes == 0:
                    self.pipes_closed.set()
                return

    def report(self, stream: str, lines: list[str]) -> None:
        tail, shown = self.output.tail()
        details = {
            "stream": stream,
            "lines": lines,
            "total_lines": self.output.total_lines,
            "truncated": shown < self.output.total_lines,
        }
        self.on_update(AgentToolResult.text(tail, details=details))

    async def run(self, cwd: str, signal: AbortSignal, timeout: float) -> tuple[Ending, int | None]:
        shell = shutil.which("bash") or "/bin/sh"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = await asyncio.create_subprocess_exec(
            shell, "-c", self.command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True,
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.pump, proc.stdout, "stdout")
                tg.start_soon(self.pump, proc.stderr, "stderr")
                ending = await _wait_for_end(proc, signal, timeout)
                if ending != "exited":
                    await _end_group(proc, self.pipes_closed)
                with anyio.move_on_after(EOF_GRACE):
                    await self.pipes_closed.wait()
                if not self.pipes_closed.is_set():
                    # Background processes still hold the pipes: end them with the call.
                    self.stragglers_killed = True
                    _signal_group(proc.pid, signals.SIGKILL)
                    with anyio.move_on_after(TERM_GRACE):
                        await self.pipes_closed.wait()
                    tg.cancel_scope.cancel()  # one that left the group: stop reading
        finally:
            if proc.returncode is None:  # cancelled by the loop: leave nothing behind
                _signal_group(proc.pid, signals.SIGKILL)
        return ending, proc.returncode


def make_run_command(workspace: Workspace) -> AgentTool:
    """Build `run_command` bound to `workspace` (its working directory)."""

    async def execute(
        tool_call_id: str, params: RunCommandParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        signal.throw_if_aborted()
        timeout = params.timeout or DEFAULT_TIMEOUT
        started = time.perf_counter()
        run = _Run(params.command, on_update)
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
            f"stdout and stderr (the last {MAX_LINES} lines / {MAX_BYTES // 1024}KB). "
            f"The command is killed after timeout seconds (default {DEFAULT_TIMEOUT:g}). "
            "A non-zero exit code is reported as an error."
        ),
        parameters=RunCommandParams,
        execute=execute,
        execution_mode="sequential",
        source="builtin",
    )
