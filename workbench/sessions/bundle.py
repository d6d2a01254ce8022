"""Self-contained copies of sessions: each file with every blob it needs beside it.

A session's workspace files live in the blob store beside the sessions folder it was
recorded in (`sessions.blobs`), so a session file copied alone into a repository
(`tests/flows/`) cannot restore them. A bundle is a directory holding session files
and a `blobs/` store beside them with every blob their checkpoints name, checked
against their hash as they are copied; restore, re-run, fork and the pytest plugin
find that store first (`blobs.store_for`), on any machine.
"""

from __future__ import annotations

import filecmp
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.sessions.blobs import BlobError, BlobStore, store_for
from workbench.sessions.checkpoints import read_records
from workbench.sessions.workspace_records import FileEntry


class BundleError(ValueError):
    """A session cannot be bundled whole; `str()` says which and why."""


@dataclass
class Bundled:
    """What `bundle` wrote."""

    sessions: list[Path] = field(default_factory=list)
    blobs: int = 0
    """Blobs copied (those already in the bundle are not counted)."""
    bytes: int = 0


def blobs_of(session: Any) -> tuple[list[str], list[BlobStore]]:
    """Every blob the session's checkpoints name (in order, once each), and the stores
    they are looked for in (the one beside the file first)."""
    names: dict[str, None] = {}
    stores = [store_for(session.path)]
    for _position, record in read_records(session):
        if record is None:
            continue
        if record.type == "workspace_manifest" and record.store:
            stores.append(BlobStore(Path(record.store)))
        entries: list[FileEntry] = list(record.files)
        names.update((e.blob, None) for e in entries if e.blob is not None)
    return list(names), stores


def bundle(sessions: list[Any], to: Path) -> Bundled:
    """Copy `sessions` (read `Session`s) into `to`, with their blobs in `to/blobs`.

    Raises:
        BundleError: a blob is missing or damaged (nothing of that session is copied),
            or `to` already holds another file of the same name.
    """
    to.mkdir(parents=True, exist_ok=True)
    target = store_for(to / "x.jsonl")
    done = Bundled()
    for session in sessions:
        source = Path(session.path)
        dest = to / source.name
        if dest.exists() and not filecmp.cmp(source, dest, shallow=False):
            raise BundleError(f"{dest} exists and is another file: bundle into another directory")
        names, stores = blobs_of(session)
        for name in names:
            if target.has(name):
                continue
            data = _find(name, stores, source)
            target.put(data)
            done.blobs += 1
            done.bytes += len(data)
        if not dest.exists():
            shutil.copyfile(source, dest)
        done.sessions.append(dest)
    return done


def _find(name: str, stores: list[BlobStore], source: Path) -> bytes:
    problems = []
    for store in stores:
        try:
            return store.get(name)
        except BlobError as exc:
            problems.append(str(exc))
    raise BundleError(f"{source.name}: a file's content is not in any store: {problems[0]}")
