"""The recorder: a bus listener that appends every event to a session file as it happens.

Each event is one line written with a single unbuffered `os.write` on an append-only
descriptor, so the moment the listener returns the line is in the kernel: a process
killed with SIGKILL right after leaves it on disk, and one killed during a write
leaves at most one torn last line, which the reader reports and skips. `fsync=True`
also survives a machine crash, at a cost per event.

The recorder subscribes first on the agent's bus, so an event is on disk before
any view (or a pause that waits on a person) sees it. It never raises into the
loop. Text of any kind is written (a lone surrogate as its JSON escape, see
`workbench.json_text`); an event no JSON line can hold (data nested too deep for
the serializer) is written as an `unrecordable` line naming its type and the
reason, which the reader reports, and recording goes on. A failed write (disk
full) ends the recording (a half written line followed by more lines would make
the file unreadable in the middle). Either is a `problem`: passed to `on_problem`
(the app notifies, headless prints a line) and kept, so the run's exit code says
the session is not whole.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from workbench.sessions.codec import dumps_header, encode, encode_unrecordable
from workbench.sessions.compact import Compactor
from workbench.sessions.header import SessionHeader
from workbench.sessions.summary_line import SummaryWriter

log = logging.getLogger("workbench.sessions")


class Recorder:
    """Appends events to `path` (header first). Call it as a bus listener.

    Args:
        path: the session file; it must not exist yet.
        header: written as the first line; a function is called when the file is
            created, so a lazy header describes the tools the agent has by then
            (MCP servers add theirs after the runtime is built).
        fsync: fsync after every line (slower; survives power loss, not only kills).
        lazy: create the file at the first event instead of now, so opening the app
            and quitting without a run leaves no empty session behind.
        prelude: events (with their times) written right after the header: a fork's
            history copied from its parent.
        prelude_records: the parent's workspace records among them, each with the
            number of prelude events it follows.
        unique: `path` is only a proposal (a name the workbench made up): if another
            workbench creates a file of that name first, the next free name
            (`NAME-2.jsonl`, ...) is taken when the file is created, so runs
            recording into one folder at once never collide.

    Raises:
        FileExistsError: `path` exists (a session is never appended to or overwritten).
    """

    def __init__(
        self,
        path: Path,
        header: SessionHeader | Callable[[], SessionHeader],
        *,
        fsync: bool = False,
        lazy: bool = False,
        prelude: Iterable[tuple[Any, float]] = (),
        prelude_records: Iterable[tuple[int, Any]] = (),
        unique: bool = False,
    ) -> None:
        self.path = Path(path)
        self._unique = unique
        self._stem = self.path.stem
        self._header = header
        self.fsync = fsync
        self._prelude = list(prelude)
        self._prelude_records = list(prelude_records)
        self.events_written = 0
        self.records_written = 0
        """Workspace checkpoint records (`write_record`): lines that are not bus events."""
        self.bytes_written = 0
        self.summaries_written = 0
        """Summary lines (`sessions.summary_line`): after each run and at the close."""
        self._summary: SummaryWriter | None = None
        self.error: str | None = None
        """Why recording stopped, if a write failed."""
        self.problems: list[str] = []
        """Every event the file does not hold as it was, and why, one sentence each."""
        self.on_problem: Callable[[str], None] | None = None
        """Called with each problem as it happens (else it is logged)."""
        self._fd: int | None = None
        self._closed = False
        self._compactor = Compactor()
        if self.path.is_file() and not unique:  # a device or a pipe is written to as a stream
            raise FileExistsError(f"session file {self.path} already exists")
        if not lazy:
            self._open()

    @classmethod
    def open(
        cls,
        path: Path,
        header: SessionHeader | Callable[[], SessionHeader],
        *,
        fsync: bool = False,
        lazy: bool = False,
        prelude: Iterable[tuple[Any, float]] = (),
    ) -> Recorder:
        """Create the session file and write its header (see the class for the arguments)."""
        return cls(path, header, fsync=fsync, lazy=lazy, prelude=prelude)

    @property
    def header(self) -> SessionHeader:
        """The header (built now if it is lazy and the file does not exist yet)."""
        if callable(self._header):
            self._header = self._header()
        return self._header

    @property
    def recording(self) -> bool:
        return not self._closed and self.error is None

    def __call__(self, event: Any, _signal: Any = None) -> None:
        """The bus listener: write `event`, never raise."""
        self.write(event)

    def write(self, event: Any, ts: float | None = None) -> None:
        """Append one event (`ts`: when it happened, epoch ms; default now)."""
        if self._closed or self.error is not None:
            return
        try:
            if self._fd is None:
                self._open()
            now = time.time() * 1000.0 if ts is None else ts
            if event.type == "message_update":  # most events: nothing to leave out or hold
                self._write_event(event, now)
            else:
                for line in self._compactor.lines(event, now):
                    self._write_event(*line)
                if event.type == "agent_end":
                    self._write_summary(now)
        except Exception as exc:  # noqa: BLE001 - recording must never break a run
            self.error = _describe(exc)
            self.close()
            self._problem(f"recording to {self.path} stopped: {self.error}")

    def write_record(self, record: Any) -> None:
        """Append a workspace checkpoint record (see `workbench.checkpointer`): a line of
        its own, between the events, that the reader keeps apart from them."""
        if self._closed or self.error is not None or self._fd is None:
            return
        try:
            self._write(encode(self._seq(), time.time() * 1000.0, record))
            self.records_written += 1
        except Exception as exc:  # noqa: BLE001 - recording must never break a run
            self.error = _describe(exc)
            self.close()
            self._problem(f"recording to {self.path} stopped: {self.error}")

    def _seq(self) -> int:
        return self.events_written + self.records_written + self.summaries_written + 1

    def _write_summary(self, ts: float) -> None:
        """Append the summary line of what the file holds now (see `sessions.summary_line`)."""
        summary = self._summary
        if summary is None or not summary.stale:
            return
        start = summary.size
        try:
            line = summary.line(self._seq(), ts)
        except Exception:  # noqa: BLE001 - the library reads the events instead
            log.warning("session %s: no summary line", self.path, exc_info=True)
            self._summary = None
            return
        self._write(line)
        self.summaries_written += 1
        summary.written(start)

    def _problem(self, text: str) -> None:
        self.problems.append(text)
        if self.on_problem is None:
            log.error("session %s", text)
        else:
            self.on_problem(text)

    def _write_event(self, event: Any, ts: float, fields: Any = None, exclude: Any = None) -> None:
        seq = self._seq()
        try:
            line = encode(seq, ts, event, fields, exclude)
            recorded: bytes | None = line
        except Exception as exc:  # noqa: BLE001 - e.g. nested too deep for the serializer
            why = _describe(exc)
            line = encode_unrecordable(seq, ts, event, why)
            recorded = None
            self._problem(f"event {seq} ({event.type}) could not be recorded: {why}")
            self._summary = None  # the reader reports the line: the events are summarized
            if event.type == "tool_execution_update":  # the next one must not build on it
                self._compactor.forget(event.tool_call_id)
        self._write(line)
        self.events_written += 1
        if recorded is not None and self._summary is not None:
            try:
                self._summary.count(event, ts)
            except Exception:  # noqa: BLE001 - the library reads the events instead
                log.warning("session %s: no summary line (event %s)", self.path, seq, exc_info=True)
                self._summary = None
        if event.type in ("message_end", "provider_request"):
            self._compactor.written(event, recorded, seq)

    def close(self) -> None:
        if self._fd is not None and self.error is None:
            try:  # the updates held back (see `sessions.compact`)
                for line in self._compactor.held():
                    self._write_event(*line)
                self._write_summary(time.time() * 1000.0)
            except Exception as exc:  # noqa: BLE001 - recording must never break a run
                self.error = _describe(exc)
                self._problem(f"recording to {self.path} stopped: {self.error}")
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None
        self._closed = True

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if not self.path.exists() or self.path.is_file():  # else a device or a pipe
            flags |= os.O_CREAT | os.O_EXCL
        tries = 1
        while True:
            try:
                self._fd = os.open(self.path, flags, 0o600)
                break
            except FileExistsError:  # O_EXCL: another workbench made it first
                if not self._unique or tries >= 1000:
                    raise
                tries += 1
                self.path = self.path.with_name(f"{self._stem}-{tries}{self.path.suffix}")
        self._summary = SummaryWriter(self.header)
        self._write(dumps_header(self.header))
        prelude, self._prelude = self._prelude, []
        records, self._prelude_records = sorted(self._prelude_records, key=lambda r: r[0]), []
        for index, (event, ts) in enumerate(prelude):
            while records and records[0][0] <= index:
                self.write_record(records.pop(0)[1])
            for line in self._compactor.lines(event, ts):
                self._write_event(*line)
        for _, record in records:
            self.write_record(record)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        written = os.write(self._fd, data)
        while written < len(data):  # a short write (rare): finish the line
            written += os.write(self._fd, data[written:])
        self.bytes_written += len(data)
        if self._summary is not None:
            self._summary.wrote(data)
        if self.fsync:
            os.fsync(self._fd)


def start_recording(
    agent: Any,
    *,
    workspace: Path,
    scenario: Any = None,
    path: Path | None = None,
    fork: Any = None,
    fsync: bool = False,
    setup: Any = None,
) -> Recorder:
    """Record `agent`'s bus from now on; call it before anything else subscribes.

    Args:
        path: the session file (default: a new one in `default_session_dir()`).
        fork: a `ForkPoint`: its parent is named in the header and the parent's
            history up to the fork is copied first, so the new file replays whole.
        setup: the `AgentSetup` to record (or a function making it at the first event).

    Raises:
        FileExistsError: `path` exists.
    """
    from workbench.sessions.header import build_header, default_session_path

    state = agent.state

    def header() -> SessionHeader:  # at the first event: the tools the agent has by then
        return build_header(
            model=state.model,
            tools=state.tools,
            workspace=workspace,
            system_prompt=state.system_prompt,
            scenario=scenario,
            parent=fork.parent if fork is not None else None,
            setup=setup() if callable(setup) else setup,
        )

    label = scenario.name if scenario is not None else state.model.id
    if fork is not None:
        label += "-fork"
    prelude = list(zip(fork.events, fork.stamps, strict=True)) if fork is not None else []
    recorder = Recorder(
        path or default_session_path(label),
        header,
        fsync=fsync,
        lazy=True,
        prelude=prelude,
        prelude_records=fork.records if fork is not None else (),
        unique=path is None,
    )
    agent.subscribe(recorder)
    return recorder


def _describe(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
