"""`list_directory`: what a directory holds, a few levels deep.

Entries are listed as paths relative to the listed directory (directories end in
"/"), depth first, so the output reads as a tree and each line can be passed
straight back to `read_file`. Version-control and cache directories (`.git`,
`node_modules`, ...) are skipped; symlinks are shown with their target and never
followed, so a link cannot lead the listing out of the workspace or into a loop.
Files the permission rules do not let `read_file` read are left out (counted in
`details` only).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field

from tools.workspace import IGNORED_DIRS, Workspace
from workbench.agent import AbortSignal, AgentTool, AgentToolResult

MAX_ENTRIES = 500
"""Most entries one listing returns."""


class ListDirectoryParams(BaseModel):
    path: str = Field(default=".", description="Directory to list, relative to the workspace root")
    depth: int = Field(
        default=1, ge=1, le=10, description="How many levels to descend (1: direct children only)"
    )
    ignore: list[str] = Field(
        default_factory=list,
        description="Extra name patterns to skip (globs such as '*.log'), besides .git and caches",
    )


@dataclass
class _Listing:
    entries: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    hidden: int = 0
    truncated: bool = False


def _walk(
    ws: Workspace,
    directory: Path,
    prefix: str,
    depth: int,
    ignore: list[str],
    out: _Listing,
    signal: AbortSignal,
) -> None:
    try:
        children = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        out.entries.append(f"{prefix}[unreadable: {exc.strerror or exc}]")
        return
    for child in children:
        if signal.aborted:
            return
        if len(out.entries) >= MAX_ENTRIES:
            out.truncated = True
            return
        rel = prefix + child.name
        if any(fnmatch.fnmatch(child.name, p) for p in ignore) or (
            child.name in IGNORED_DIRS and child.is_dir(follow_symlinks=False)
        ):
            out.skipped.append(rel)
            continue
        if (
            not child.is_dir()
            and ws.contains(Path(os.path.realpath(child.path)))
            and not (ws.shown(Path(child.path)))
        ):
            out.hidden += 1
            continue
        if child.is_symlink():
            target = Path(os.path.realpath(child.path))
            where = ws.display(target) if ws.contains(target) else "(outside the workspace)"
            slash = "/" if ws.contains(target) and target.is_dir() else ""
            out.entries.append(f"{rel}{slash} -> {where}")
        elif child.is_dir(follow_symlinks=False):
            out.entries.append(rel + "/")
            if depth > 1:
                _walk(ws, Path(child.path), rel + "/", depth - 1, ignore, out, signal)
        else:
            out.entries.append(rel)


def make_list_directory(workspace: Workspace) -> AgentTool:
    """Build `list_directory` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: ListDirectoryParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        path = workspace.resolve(params.path)
        shown = workspace.display(path)
        if not path.exists():
            raise FileNotFoundError(f"Directory not found: {params.path}")
        if not path.is_dir():
            raise NotADirectoryError(f"{shown} is a file, not a directory; use read_file")
        listing = _Listing()
        await anyio.to_thread.run_sync(
            _walk, workspace, path, "", params.depth, params.ignore, listing, signal
        )
        signal.throw_if_aborted()
        text = "\n".join(listing.entries) if listing.entries else "[empty directory]"
        if listing.truncated:
            text += f"\n\n[Listing stopped at {MAX_ENTRIES} entries; list a subdirectory for more.]"
        details = {
            "path": shown,
            "depth": params.depth,
            "entries": len(listing.entries),
            "skipped": listing.skipped,
            "hidden": listing.hidden,
            "truncated": listing.truncated,
        }
        return AgentToolResult.text(text, details=details)

    return AgentTool(
        name="list_directory",
        label="List directory",
        description=(
            "List the files and directories under a workspace directory (directories end "
            "in '/'). depth sets how many levels to descend; .git, node_modules and cache "
            "directories are skipped."
        ),
        parameters=ListDirectoryParams,
        execute=execute,
        source="builtin",
    )
