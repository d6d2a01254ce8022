"""`write_file`: create or overwrite a text file in the workspace.

Parent directories are created as needed; the content is written byte for byte
(no newline translation), and the result says whether the file was created or
replaced so the transcript shows what changed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tools.workspace import Workspace
from workbench.agent import AbortSignal, AgentTool, AgentToolResult


class WriteFileParams(BaseModel):
    path: str = Field(description="Path of the file to write, relative to the workspace root")
    content: str = Field(description="The complete new content of the file")


def make_write_file(workspace: Workspace) -> AgentTool:
    """Build `write_file` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: WriteFileParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        path = workspace.resolve(params.path)
        shown = workspace.display(path)
        if path.is_dir():
            raise IsADirectoryError(f"{shown} is a directory; give the path of a file")
        if path.exists() and not path.is_file():
            raise ValueError(f"{shown} is not a regular file (a device, socket or pipe)")
        signal.throw_if_aborted()
        created = not path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        data = params.content.encode("utf-8")
        path.write_bytes(data)
        verb = "Created" if created else "Overwrote"
        details = {
            "path": shown,
            "bytes": len(data),
            "lines": len(params.content.splitlines()),
            "created": created,
        }
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
