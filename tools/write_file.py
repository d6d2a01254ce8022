"""`write_file`: create or overwrite a text file in the workspace.

Parent directories are created as needed; the content is written byte for byte
(no newline translation), and the result says whether the file was created or
replaced so the transcript shows what changed (for a file the rules hide from
`read_file`, only that it was written). The file is opened where the gate judged
it, never through a symlink (`Workspace.open`).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from pydantic import BaseModel, Field

from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.tools.workspace import NotFound, Workspace


class WriteFileParams(BaseModel):
    path: str = Field(description="Path of the file to write, relative to the workspace root")
    content: str = Field(description="The complete new content of the file")


def make_write_file(workspace: Workspace) -> AgentTool:
    """Build `write_file` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: WriteFileParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        data = params.content.encode("utf-8")
        created, shown = _write(workspace, params.path, data, signal)
        # A file the rules hide gets no "created" or "replaced": that would tell the
        # model whether it existed.
        hidden = not workspace.may_read(shown)
        verb = "Wrote" if hidden else "Created" if created else "Overwrote"
        details: dict[str, Any] = {
            "path": shown,
            "bytes": len(data),
            "lines": len(params.content.splitlines()),
        }
        if not hidden:
            details["created"] = created
        return AgentToolResult.text(f"{verb} {shown} ({len(data)} bytes)", details=details)

    return AgentTool(
        name="write_file",
        label="Write file",
        description=(
            "Write a text file in the workspace, replacing it if it exists and creating "
            "parent directories as needed. For small changes to an existing file prefer edit_file."
        ),
        parameters=WriteFileParams,
        execute=execute,
        source="builtin",
    )


def _write(workspace: Workspace, raw: str, data: bytes, signal: AbortSignal) -> tuple[bool, str]:
    """Write `data` to the file `raw` names, opened where it was judged (never through
    a symlink, `Workspace.open`); (whether it was created, how to show it)."""
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd, shown = workspace.open(raw, flags)
        created = False
    except NotFound as exc:
        fd, created, shown = -1, True, exc.shown
    except IsADirectoryError as exc:
        raise IsADirectoryError(f"{exc.filename} is a directory; give the path of a file") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a pipe with no reader
            raise ValueError(
                f"{exc.filename} is not a regular file (a device, socket or pipe)"
            ) from None
        raise
    try:
        if fd >= 0 and not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{shown} is not a regular file (a device, socket or pipe)")
        signal.throw_if_aborted()
        if fd < 0:
            fd, shown = workspace.open(raw, flags | os.O_CREAT | os.O_EXCL, make_parents=True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        if fd >= 0:
            os.close(fd)
    return created, shown
