"""The workspace as it was at any point of a recorded session, and writing it out.

A session with checkpoints holds a `workspace_manifest` record (every file when
the recording started, see `workbench.checkpointer`) and a
`workspace_change` after each call that changed files (`Session.records`: each
with the number of events before it). The files after position p (p events) are
the last manifest at or before it (or the first one: before any turn, the
workspace was as the manifest found it) with every later change up to p applied. A file a change
left out (too large by then) has no known content from there on: it is listed,
never restored from an older version.

Paths come from the session file, which may have been written by anyone: each is
checked to be a plain relative path that stays in the destination, and nothing is
written under `.git/` or `.workbench/` (at any depth) or through a symlink. Nor does
a restore bring configuration: no `workbench.toml`, no MCP config, and a
`pyproject.toml` only without a `[tool.workbench]` table. Modes are written as
0o755 (any execute bit recorded) or 0o644, whatever the file says.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from workbench.json_text import LINE_DEPTH, loads
from workbench.sessions.blobs import BlobError, BlobStore, store_for
from workbench.sessions.log import types_of
from workbench.sessions.workspace_records import FileEntry, parse_record_line

_DESIGN = (
    "a dependency or cache",
    "the workbench's rules",
    "the session files",
    "a symlink",
    "not a regular file",
    "hidden from read_file",
)
"""Reasons a path is left out by design (not by a cap): restoring without them is whole."""
NEVER_RESTORED_NAMES = ("workbench.toml", "mcp.json", ".mcp.json")
"""File names (at any depth) a restore never writes: the project's configuration."""
NEVER_RESTORED = (".workbench", ".git")
"""Top-level directories nothing is written under: the permission gate's protected
directories (`workbench.permissions.protected.PROTECTED_DIRS`; a test pins them equal,
this package sits below the gate)."""


class CheckpointError(ValueError):
    """The workspace cannot be restored; `str()` says why in one line."""


@dataclass
class WorkspaceAt:
    """The workspace's files at one position of a session."""

    files: dict[str, FileEntry] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    """Paths the checkpoints do not hold at that point, and why."""
    notes: list[str] = field(default_factory=list)
    stores: list[BlobStore] = field(default_factory=list)
    empty_dirs: list[str] = field(default_factory=list)
    """Directories with nothing in them at that point."""
    tracked: set[str] = field(default_factory=set)
    """Every path any record of the session names (an in-place restore deletes those
    that did not exist at that point)."""

    @property
    def incomplete(self) -> dict[str, str]:
        """The files left out by a cap or an error (not by design, like `.git/`)."""
        return {p: r for p, r in self.left_out.items() if not r.startswith(_DESIGN)}

    def blob(self, entry: FileEntry) -> bytes:
        assert entry.blob is not None
        for store in self.stores:
            if store.has(entry.blob):
                return store.get(entry.blob)
        raise BlobError(
            f"the content of {entry.path} (blob {entry.blob[:12]}) is not in "
            f"{' or '.join(str(s.root) for s in self.stores)}"
        )


def read_records(session: Any) -> list[tuple[int, Any]]:
    """The session's workspace records: (position, record), in order."""
    out = []
    with Path(session.path).open("rb") as handle:
        for position, offset in getattr(session, "records", ()):
            handle.seek(offset)
            out.append((position, parse_record_line(loads(handle.readline(), LINE_DEPTH))))
    return out


def has_checkpoints(session: Any) -> bool:
    return bool(getattr(session, "records", None))


def turn_position(session: Any, turn: int | str) -> int:
    """The position of the start of `turn` (events before it): 0 is before anything,
    "end" after the last event.

    Raises:
        CheckpointError: a turn the session does not have.
    """
    kinds = list(types_of(session.events))
    if turn == "end":
        return len(kinds)
    starts = [i for i, k in enumerate(kinds) if k == "turn_start"]
    if not isinstance(turn, int) or turn < 0 or turn > len(starts):
        raise CheckpointError(
            f"{session.path.name} has turns 1 to {len(starts)}: give --turn 0..{len(starts)} or end"
        )
    return 0 if turn == 0 else starts[turn - 1]


def workspace_at(session: Any, position: int) -> WorkspaceAt:
    """The files after `position` events (see the module).

    Raises:
        CheckpointError: the session holds no checkpoints.
    """
    records = read_records(session)
    manifests = [i for i, (_, r) in enumerate(records) if r.type == "workspace_manifest"]
    if not manifests:
        raise CheckpointError(
            f"{session.path.name} was recorded before checkpoints existed (or with them off): "
            "it holds no workspace files to restore"
        )
    base = max((i for i in manifests if records[i][0] <= position), default=manifests[0])
    state = WorkspaceAt(stores=[store_for(session.path)])
    for index, (at, record) in enumerate(records):
        state.tracked.update(f.path for f in record.files)
        if index == base:
            state.files = {f.path: f for f in record.files}
            state.left_out = {item.path: item.reason for item in record.left_out}
            state.notes = list(record.notes)
            state.empty_dirs = list(record.empty_dirs)
            if record.store:
                state.stores.append(BlobStore(Path(record.store)))
        elif index > base and at <= position and record.type == "workspace_change":
            _apply(state, record)
    return state


def _apply(state: WorkspaceAt, change: Any) -> None:
    for entry in change.files:
        state.left_out.pop(entry.path, None)
        if entry.blob is None:
            state.files.pop(entry.path, None)
        else:
            state.files[entry.path] = entry
    for item in change.left_out:
        state.files.pop(item.path, None)
        state.left_out[item.path] = item.reason
    state.notes += [f"after {change.cause}: {note}" for note in change.notes]
    if change.empty_dirs is not None:
        state.empty_dirs = list(change.empty_dirs)


@dataclass
class Restored:
    """What a restore wrote."""

    dest: Path
    state: WorkspaceAt
    written: int = 0
    bytes: int = 0
    deleted: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    """Paths of the session not written because they are not safe to write, and why."""


def restore_workspace(
    session: Any, turn: int | str, dest: Path, *, force: bool = False, in_place: bool = False
) -> Restored:
    """Write the workspace as it was at the start of `turn` (0: before the first turn,
    "end": after the last event) into `dest`.

    Args:
        force: write into a `dest` that is not empty.
        in_place: `dest` is the workspace itself (implies `force`).
    Both also delete the files the session knows of that did not exist at that point.

    Raises:
        CheckpointError: no checkpoints, a turn the session does not have, a `dest`
            that is not empty (without `force`), or a blob missing or damaged.
    """
    return restore_at(session, turn_position(session, turn), dest, force=force or in_place)


def restore_at(session: Any, position: int, dest: Path, *, force: bool = False) -> Restored:
    """`restore_workspace` at a position (e.g. a fork's cut)."""
    state = workspace_at(session, position)
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise CheckpointError(f"{dest} is not a directory")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise CheckpointError(f"{dest} is not empty (pass --force to write into it anyway)")
    done = Restored(dest, state)
    safe = {}
    for path, entry in sorted(state.files.items()):
        why = unsafe(path)
        if why:
            done.refused[path] = why
        else:
            safe[path] = entry
    try:
        for entry in safe.values():  # every blob is there before anything is written
            if not any(s.has(entry.blob or "") for s in state.stores):
                state.blob(entry)
        dest.mkdir(parents=True, exist_ok=True)
        root = Path(os.path.realpath(dest))
        if force:
            for path in sorted(state.tracked - set(state.files) - set(state.left_out)):
                if not unsafe(path) and _delete(root, path):
                    done.deleted.append(path)
        for path, entry in safe.items():
            data = state.blob(entry)
            why = config_refusal(path, data)
            if why is not None:
                done.refused[path] = why
                continue
            _write(root, path, data, entry.mode)
            done.written += 1
            done.bytes += len(data)
        for path in state.empty_dirs:
            why = unsafe(path)
            if why:
                done.refused[path + "/"] = why
            else:
                _make_dir(root, path)
    except BlobError as exc:
        raise CheckpointError(str(exc)) from None
    except OSError as exc:
        raise CheckpointError(f"cannot write into {dest}: {exc.strerror or exc}") from None
    return done


def unsafe(path: str) -> str | None:
    """Why a recorded path may not be written (None: it may)."""
    parts = PurePosixPath(path).parts
    if not path or "\x00" in path or "\\" in path or PurePosixPath(path).is_absolute():
        return "not a plain relative path"
    if any(p in ("..", ".") for p in parts) or path != "/".join(parts):
        return "not a plain relative path"
    hidden = next((p for p in parts if p.casefold() in NEVER_RESTORED), None)
    if hidden is not None:
        return f"under {hidden}/ (never restored)"
    if parts[-1].casefold() in NEVER_RESTORED_NAMES:
        return "the project's configuration (never restored)"
    return None


def config_refusal(path: str, data: bytes) -> str | None:
    """Why a file's recorded content may not be written: a `pyproject.toml` holding the
    workbench's configuration (`[tool.workbench]`) would configure the next start there."""
    if PurePosixPath(path).name.casefold() != "pyproject.toml":
        return None
    import tomllib

    try:
        tool = tomllib.loads(data.decode("utf-8")).get("tool")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # no configuration can be read from it either
    if isinstance(tool, dict) and "workbench" in tool:
        return "holds [tool.workbench], the project's configuration (never restored)"
    return None


def safe_mode(mode: int) -> int:
    """The mode a restored file gets: 0o755 when any execute bit was recorded, else 0o644
    (never a recorded 0o777, setuid or sticky bit)."""
    return 0o755 if mode & 0o111 else 0o644


def _inside(root: Path, directory: Path) -> bool:
    real = Path(os.path.realpath(directory))
    return real == root or real.is_relative_to(root)


def _write(root: Path, path: str, data: bytes, mode: int) -> None:
    target = root / path
    if not _inside(root, target.parent):
        raise OSError(0, f"{path} would be written through a symlink that leaves the directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not _inside(root, target.parent):
        raise OSError(0, f"{path} would be written through a symlink that leaves the directory")
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".restore-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, safe_mode(mode))
        os.replace(temp, target)  # replaces a link itself, never what it points to
    except BaseException:
        if os.path.lexists(temp):
            os.unlink(temp)
        raise


def _make_dir(root: Path, path: str) -> None:
    """Make the directory `path` (and its parents) under `root`, never through a link."""
    current = root
    for part in PurePosixPath(path).parts:
        current = current / part
        if current.is_symlink() or not _inside(root, current.parent):
            raise OSError(0, f"{path}/ would be made through a symlink that leaves the directory")
        current.mkdir(exist_ok=True)


def _delete(root: Path, path: str) -> bool:
    target = root / path
    if not _inside(root, target.parent) or not os.path.lexists(target) or target.is_dir():
        return False
    os.unlink(target)
    return True


@dataclass
class StartFiles:
    """Where a fork or a re-run runs, and how its files came to be there."""

    workspace: Path
    description: str
    """One line for the screen and the report: which files, restored or as they are."""
    restored: Restored | None = None


def start_files(
    session: Any,
    position: int,
    *,
    workspace: Path | None,
    in_place: bool | None,
    at: str,
    fallback: Any,
    scratch: Any = None,
) -> StartFiles:
    """The workspace a fork or a re-run of `session` starts in.

    The files after `position` events are restored into `workspace` when it is new or
    empty, or into a new scratch directory when none is named. `workspace` is used as
    it is (nothing restored) when it is not empty, with `in_place=True`, or for a
    session without checkpoints (then `fallback()` when none is named).

    Args:
        in_place: True: as it is; False: restore, refusing a directory that is not
            empty; None: as above.
        at: how the position is named ("the start", "the end of turn 3").
        fallback: makes the workspace of a session without checkpoints (or raises).
        scratch: makes the scratch directory (None: an empty one), e.g. one seeded
            with the scenario's files: the recorded files are written over them, so
            what checkpoints never hold (`.workbench/`) comes from there.

    Raises:
        CheckpointError: `in_place=False` and `workspace` is not empty, or a blob is
            missing from the store.
    """
    occupied = workspace is not None and workspace.is_dir() and any(workspace.iterdir())
    if occupied and in_place is False:
        raise CheckpointError(
            f"{workspace} is not empty: the recorded files are restored into a new or empty "
            "directory (pass --in-place to run in it as it is)"
        )
    if in_place or (occupied and in_place is None) or not has_checkpoints(session):
        where = workspace if workspace is not None else fallback()
        if in_place:
            why = "as it is (in place: nothing restored)"
        elif not has_checkpoints(session):
            why = "as it is: the session was recorded before checkpoints existed"
        else:
            why = (
                "as it is: not empty, so nothing was restored (name a new or empty "
                "directory to start from the recorded files)"
            )
        return StartFiles(Path(where), f"{where}, {why}")
    if workspace is not None:
        dest = workspace
    else:
        dest = scratch() if scratch is not None else Path(tempfile.mkdtemp(prefix="workbench-"))
    done = restore_at(session, position, dest, force=workspace is None)
    missing = done.state.incomplete
    lacking = ""
    if missing:
        lacking = f"; {len(missing)} files not recorded: {', '.join(sorted(missing))}"
    kind = "a scratch copy" if workspace is None else "restored"
    return StartFiles(
        dest, f"{dest}: {kind} of the files at {at} ({done.written} files{lacking})", done
    )


def apply_change(dest: Path, change: Any, stores: list[BlobStore]) -> list[str]:
    """Write a recorded `workspace_change` into `dest` (a hand edit made between two
    runs, re-applied by a re-run): its files written, its deletions deleted. Returns
    what could not be done (a path not safe to write, a blob missing), one line each."""
    state = WorkspaceAt(stores=stores)
    root = Path(os.path.realpath(dest))
    problems: list[str] = []
    for entry in change.files:
        why = unsafe(entry.path)
        if why:
            problems.append(f"{entry.path}: {why}")
            continue
        try:
            if entry.blob is None:
                _delete(root, entry.path)
            else:
                _write(root, entry.path, state.blob(entry), entry.mode)
        except BlobError as exc:
            problems.append(str(exc))
        except OSError as exc:
            problems.append(f"{entry.path}: {exc.strerror or exc}")
    return problems


def stores_of(session: Any) -> list[BlobStore]:
    """The blob stores a session's contents are looked for in: the one beside the file
    first, then the one its first manifest names."""
    stores = [store_for(session.path)]
    for _position, record in read_records(session):
        if record is not None and record.type == "workspace_manifest" and record.store:
            stores.append(BlobStore(Path(record.store)))
            break
    return stores
