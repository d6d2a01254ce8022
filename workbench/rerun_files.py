"""A re-run's files, then and now: hand edits put back, side effects compared.

A session with checkpoints records what changed in the workspace after each call
(`workspace_change` with its call id) and what a person changed between two runs
(`workspace_change` "between runs", at the later run's start). A re-run

- writes each recorded hand edit back before the run it preceded, so the later runs
  see the files the recorded ones saw;
- after each call, compares the files the recording says that call changed with the
  workspace's (content, or absence for a deletion): a file that differs is a
  divergence of that call;
- at the end, compares every file the recording knew of with the workspace, and
  names files that exist now but never in the recording.

Paths come from the session file: only plain relative paths are looked at
(`sessions.checkpoints.unsafe`); a file the recording left out (past a cap) is not
compared.
"""

from __future__ import annotations

import bisect
import hashlib
import os
from collections import deque
from pathlib import Path
from typing import Any

from workbench.sessions.checkpoints import (
    apply_change,
    has_checkpoints,
    read_records,
    stores_of,
    unsafe,
    workspace_at,
)
from workbench.sessions.log import types_of
from workbench.workspace_scan import CheckpointCaps, walk

BETWEEN_RUNS = "between runs"


def _digest(path: Path) -> str | None:
    """The sha256 of a regular file's bytes (None: no such file, or not a regular file)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _expected(path: str, blob: str | None, actual: str | None) -> str | None:
    """Why the file differs from the recording (None: it does not)."""
    if blob == actual:
        return None
    if blob is None:
        return f"file {path}: deleted in the recording, present now"
    if actual is None:
        return f"file {path}: written in the recording, missing now"
    return f"file {path}: its content differs from the recording"


class FileChecks:
    """The checks described in the module, for one re-run of `session` in `workspace`."""

    def __init__(self, session: Any, workspace: Path, restored: bool = True) -> None:
        """`restored`: the re-run started from the recorded files (else nothing is
        compared or put back: the workspace was used as it was)."""
        self.workspace = workspace
        self.session = session
        self.enabled = restored and has_checkpoints(session)
        self.hand_edits: dict[int, list[Any]] = {}
        self.after: dict[str, deque[Any]] = {}
        self.stores = stores_of(session) if self.enabled else []
        if not self.enabled:
            return
        kinds = list(types_of(session.events))
        self.events = len(kinds)
        starts = [i for i, kind in enumerate(kinds) if kind == "agent_start"]
        for position, record in read_records(session):
            if record is None or record.type != "workspace_change":
                continue
            if record.tool_call_id is not None:
                self.after.setdefault(record.tool_call_id, deque()).append(record)
            elif record.cause == BETWEEN_RUNS:
                run = bisect.bisect_left(starts, position)  # runs started before it
                self.hand_edits.setdefault(run, []).append(record)

    def before_run(self, number: int) -> tuple[int, list[str]]:
        """Put back the hand edits recorded at the start of run `number` (1-based):
        (files written or deleted, problems)."""
        count, problems = 0, []
        if number < 2:
            return 0, []
        for change in self.hand_edits.get(number, []):
            problems += apply_change(self.workspace, change, self.stores)
            count += len(change.files)
        return count, problems

    def after_call(self, call_id: str) -> list[str]:
        """The files the recorded call changed that differ now (one line each)."""
        queue = self.after.get(call_id)
        if not queue:
            return []
        change = queue.popleft()
        out = []
        left_out = {item.path for item in change.left_out}
        for entry in change.files:
            if entry.path in left_out or unsafe(entry.path):
                continue
            why = _expected(entry.path, entry.blob, _digest(self.workspace / entry.path))
            if why:
                out.append(why)
        return out

    def at_end(self) -> list[str]:
        """Files that differ from the recording's last state (one line each)."""
        if not self.enabled:
            return []
        state = workspace_at(self.session, self.events)
        out = []
        for path in sorted(state.tracked):
            if path in state.left_out or unsafe(path):
                continue
            entry = state.files.get(path)
            why = _expected(path, entry.blob if entry else None, _digest(self.workspace / path))
            if why:
                out.append(why)
        found = walk(Path(os.path.realpath(self.workspace)), CheckpointCaps())
        for path in sorted(set(found.files) - state.tracked):
            if path not in state.left_out and not unsafe(path):
                out.append(f"file {path}: present now, never in the recording")
        return out
