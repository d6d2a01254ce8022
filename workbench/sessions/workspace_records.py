"""The workspace checkpoint records a session file holds between its events.

They are written by `workbench.checkpointer` as lines of the same shape as events
(`{"seq", "ts", "event": {"type": "workspace_manifest" | "workspace_change", ...}}`)
but they are not bus events: the reader keeps them apart (`Session.records`), so
the events, their positions and everything built on them are as without them. A
workbench older than them skips these lines with a warning (an unknown type).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

RECORD_TYPES = ("workspace_manifest", "workspace_change")
MARKERS = tuple(f'"type":"{kind}"'.encode() for kind in RECORD_TYPES)
"""Bytes every record line holds (a line holding them may still be an event whose
arguments say so: `parse_record_line` decides)."""


class FileEntry(BaseModel):
    """One workspace file: its content by hash in the blob store (`sessions.blobs`)."""

    path: str
    """Relative to the workspace root, with forward slashes."""
    blob: str | None = None
    """The sha256 of its bytes (None: the file was deleted)."""
    mode: int = 0o644
    """Its permission bits."""
    size: int = 0


class LeftOut(BaseModel):
    """A file or directory a checkpoint does not hold, and why (restore lists them)."""

    path: str
    reason: str


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)

    timestamp: float = Field(default_factory=lambda: time.time() * 1000.0)


class WorkspaceManifest(_Record):
    """The workspace's files when the recording started: the base every later
    `workspace_change` applies to."""

    type: Literal["workspace_manifest"] = "workspace_manifest"
    files: list[FileEntry] = Field(default_factory=list)
    left_out: list[LeftOut] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Bounds that were hit (too many files, the total size cap), one sentence each."""
    store: str = ""
    """The blob store the files went to (a store beside the session file is tried first)."""
    empty_dirs: list[str] = Field(default_factory=list)
    """Directories with nothing in them."""


class WorkspaceChange(_Record):
    """Files a call changed: a built-in write or edit, or what a scan after a command
    (or any tool that is not a built-in) found changed, created or deleted."""

    type: Literal["workspace_change"] = "workspace_change"
    cause: str
    """The tool whose call changed them, or "between runs"."""
    tool_call_id: str | None = None
    files: list[FileEntry] = Field(default_factory=list)
    left_out: list[LeftOut] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    empty_dirs: list[str] | None = None
    """Every empty directory after the call, when that changed (None: as before)."""


Record = Annotated[Union[WorkspaceManifest, WorkspaceChange], Field(discriminator="type")]  # noqa: UP007
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Record)


def parse_record_line(line: dict[str, Any]) -> Any:
    """The record of a decoded line, or None when the line is not a record."""
    data = line.get("event")
    if isinstance(data, dict) and data.get("type") in RECORD_TYPES:
        return _ADAPTER.validate_python(data)
    return None
