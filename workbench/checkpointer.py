"""Record the workspace's files into the session as the run changes them.

A bus listener subscribed right after the recorder. It writes its records through
the recorder (`Recorder.write_record`), so each lands in the file right after the
event that caused it. They are not bus events: the reader keeps them apart
(`Session.records`), so replay, export and diff see the run's events as before.

- at the first `agent_start`: a `workspace_manifest` of every file (the base);
- at each later `agent_start`: a `workspace_change` of what changed between runs
  (a person editing files while the app was idle);
- after a built-in `write_file` or `edit_file` that succeeded: the file it wrote;
- after any other call that ran, except the read-only built-ins (so `run_command`,
  your own tools and MCP tools): what a scan finds changed since the last record.

The scans run in a worker thread; the loop waits for them, so a record describes
the files as they were when the call ended. A file `read_file` may not read unasked
(denied or hidden by the rules) is never recorded: its bytes would otherwise sit in
the blob store for anyone with the session. Nothing here raises into the run: a
failure becomes a note in the record (or, if even that fails, a recorder problem).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from workbench.sessions.blobs import store_for
from workbench.sessions.workspace_records import (
    FileEntry,
    LeftOut,
    WorkspaceChange,
    WorkspaceManifest,
)
from workbench.workspace_scan import (
    WHY_LINK,
    CheckpointCaps,
    Stat,
    Walk,
    capture,
    read_regular,
    stat_of,
    walk,
)

log = logging.getLogger("workbench.sessions")

HIDDEN = "hidden from read_file by the permission rules (never recorded)"
"""Why a denied or hidden file is left out (`sessions.checkpoints` counts it as by design)."""

_WRITES = ("write_file", "edit_file")
_READS = ("read_file", "list_directory", "search_files")


class Checkpointer:
    """Records `workspace`'s files into `recorder`'s session (see the module)."""

    def __init__(
        self,
        recorder: Any,
        agent: Any,
        workspace: Path,
        caps: CheckpointCaps,
        may_record: Callable[[str], bool] | None = None,
    ) -> None:
        self.recorder = recorder
        self.may_record: Callable[[str], bool] = may_record or (lambda _path: True)
        """Whether a workspace-relative file may be recorded: only what `read_file` may
        read unasked (the gate's `may_read`), so a denied or hidden file's bytes never
        enter the session's blob store."""
        self.agent = agent
        self.root = Path(os.path.realpath(workspace))
        self.caps = caps
        self.store = store_for(recorder.path)
        self.known: dict[str, tuple[int, int, int]] = {}
        """Every file seen: its (mtime_ns, size, mode) when last recorded or left out (a
        file left out is looked at again only when it changes; a `chmod +x` is a change)."""
        self.empty_dirs: list[str] = []
        """The empty directories last recorded."""
        self.links: set[str] = set()
        """Symlinks already listed as left out (one made by a call is listed once)."""
        self.started = False

    async def __call__(self, event: Any, _signal: Any = None) -> None:
        if not self.recorder.recording:
            return
        kind = event.type
        if kind == "agent_start":
            first, self.started = not self.started, True
            await self._record(self._manifest if first else self._scan, "between runs", None)
        elif kind == "tool_execution_end" and not event.injected and event.duration_ms is not None:
            name = event.tool_name
            builtin = self._builtin(name)
            if builtin and name in _READS:
                return
            if builtin and name in _WRITES:
                if not event.is_error:
                    path = (event.result.details or {}).get("path")
                    if isinstance(path, str):
                        await self._record(self._written, name, event.tool_call_id, path)
                return
            await self._record(self._scan, name, event.tool_call_id)

    def _builtin(self, name: str) -> bool:
        tool = next((t for t in self.agent.state.tools if t.name == name), None)
        return tool is not None and getattr(tool, "source", None) == "builtin"

    async def _record(self, work: Any, cause: str, call_id: str | None, *args: Any) -> None:
        try:
            event = await anyio.to_thread.run_sync(work, cause, call_id, *args)
        except Exception as exc:  # noqa: BLE001 - a checkpoint must never break a run
            log.exception("workspace checkpoint failed")
            event = WorkspaceChange(
                cause=cause,
                tool_call_id=call_id,
                notes=[f"the workspace could not be recorded: {type(exc).__name__}: {exc}"],
            )
        if event is not None:
            self.recorder.write_record(event)

    def _walk(self) -> tuple[Walk, dict[str, Stat]]:
        """What a walk found, less the files the rules hide (returned apart)."""
        found = walk(self.root, self.caps, skip=[self.recorder.path.parent])
        hidden = {p: s for p, s in found.files.items() if not self.may_record(p)}
        for rel in hidden:
            del found.files[rel]
        return found, hidden

    def _manifest(self, _cause: str, _call_id: str | None) -> WorkspaceManifest:
        found, hidden = self._walk()
        found.left_out += [LeftOut(path=p, reason=HIDDEN) for p in hidden]
        done = capture(self.root, found.files, sorted(found.files), self.store, self.caps)
        self._remember(found.files, done.files, done.left_out)
        self._remember(hidden, [], found.left_out)
        self.links = {item.path for item in found.left_out if item.reason == WHY_LINK}
        self.empty_dirs = found.empty_dirs
        return WorkspaceManifest(
            empty_dirs=found.empty_dirs,
            files=done.files,
            left_out=found.left_out + done.left_out,
            notes=found.notes + done.notes,
            store=str(self.store.root),
        )

    def _scan(self, cause: str, call_id: str | None) -> WorkspaceChange | None:
        found, hidden = self._walk()
        changed = [
            p
            for p, s in found.files.items()
            if p not in self.known or self.known[p] != (s.mtime_ns, s.size, s.mode)
        ]
        unseen = [
            LeftOut(path=p, reason=HIDDEN)
            for p, s in hidden.items()
            if p not in self.known or self.known[p] != (s.mtime_ns, s.size, s.mode)
        ]
        self._remember(hidden, [], unseen)
        gone = [
            p for p in self.known if p not in found.files and not os.path.lexists(self.root / p)
        ]
        done = capture(self.root, found.files, changed, self.store, self.caps)
        done.left_out += unseen
        self._remember({p: found.files[p] for p in changed}, done.files, done.left_out)
        for path in gone:
            del self.known[path]
        files = done.files + [FileEntry(path=p, blob=None) for p in gone]
        notes = found.notes + done.notes
        links = [i for i in found.left_out if i.reason == WHY_LINK and i.path not in self.links]
        self.links.update(item.path for item in links)
        left_out = done.left_out + links  # a link made by the call: listed, not dropped
        dirs = None
        if found.empty_dirs != self.empty_dirs:
            dirs = self.empty_dirs = found.empty_dirs
        if not (files or left_out or notes or dirs is not None):
            return None
        return WorkspaceChange(
            cause=cause,
            tool_call_id=call_id,
            files=files,
            left_out=left_out,
            notes=notes,
            empty_dirs=dirs,
        )

    def _written(self, cause: str, call_id: str | None, path: str) -> WorkspaceChange:
        target = self.root / path
        info = stat_of(target)
        if info is None or path.startswith(("/", "../")) or path in ("", "."):
            return WorkspaceChange(
                cause=cause,
                tool_call_id=call_id,
                left_out=[LeftOut(path=path, reason="not a regular file after the call")],
            )
        if not self.may_record(path):
            left_out = [LeftOut(path=path, reason=HIDDEN)]
            self._remember({path: info}, [], left_out)
            return WorkspaceChange(cause=cause, tool_call_id=call_id, left_out=left_out)
        if info.size > self.caps.max_file_bytes:
            done_files: list[FileEntry] = []
            left = [
                LeftOut(
                    path=path,
                    reason=(
                        f"larger than the per-file cap ({info.size} > "
                        f"{self.caps.max_file_bytes} bytes)"
                    ),
                )
            ]
        else:
            data = read_regular(target)
            done_files = [
                FileEntry(path=path, blob=self.store.put(data), mode=info.mode, size=len(data))
            ]
            left = []
        self._remember({path: info}, done_files, left)
        return WorkspaceChange(cause=cause, tool_call_id=call_id, files=done_files, left_out=left)

    def _remember(
        self, stats: dict[str, Stat], stored: list[FileEntry], left: list[LeftOut]
    ) -> None:
        for entry in stored:
            info = stats[entry.path]
            self.known[entry.path] = (info.mtime_ns, info.size, info.mode)
        for item in left:
            kept = stats.get(item.path)
            if kept is not None:
                self.known[item.path] = (kept.mtime_ns, kept.size, kept.mode)


def attach_checkpoints(
    agent: Any,
    recorder: Any,
    workspace: Path,
    caps: CheckpointCaps | None = None,
    may_record: Callable[[str], bool] | None = None,
) -> Checkpointer | None:
    """Subscribe a `Checkpointer` (call it right after subscribing the recorder);
    `may_record` says which files may be recorded (see `Checkpointer.may_record`)."""
    caps = caps or CheckpointCaps()
    path = Path(recorder.path)
    if not caps.enabled or (path.exists() and not path.is_file()):  # e.g. /dev/stdout
        return None
    checkpointer = Checkpointer(recorder, agent, workspace, caps, may_record)
    agent.subscribe(checkpointer)
    return checkpointer
