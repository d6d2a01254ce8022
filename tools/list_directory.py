"""`list_directory`: what a directory holds, a few levels deep.

Entries are listed as paths relative to the listed directory (directories end in
"/"), depth first, so the output reads as a tree and each line can be passed
straight back to `read_file`. Version-control and cache directories (`.git`,
`node_modules`, ...) are skipped; symlinks are shown with their target and never
followed, so a link cannot lead the listing out of the workspace or into a loop.
Files the permission rules do not let `read_file` read are left out (counted in
`details` only), and listing one by name says it is not found, as for a missing
one. Directories are opened from the workspace's handle, never through a link
(`workbench.tools.opening`).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field

from workbench.agent import AbortSignal, AgentTool, AgentToolResult
from workbench.tools.opening import DIRECTORY_FLAGS
from workbench.tools.workspace import IGNORED_DIRS, Workspace

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
    fd: int,
    base: str,
    prefix: str,
    depth: int,
    ignore: list[str],
    out: _Listing,
    signal: AbortSignal,
) -> None:
    """List the directory open as `fd` (`base`: its path from the root), descending
    through directories opened from it, never through a link."""
    try:
        children = sorted(os.scandir(fd), key=lambda e: e.name)
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
        where = ws.root / base / rel if base != "." else ws.root / rel
        is_dir = child.is_dir(follow_symlinks=False)
        if any(fnmatch.fnmatch(child.name, p) for p in ignore) or (
            child.name in IGNORED_DIRS and is_dir
        ):
            out.skipped.append(rel)
            continue
        target = Path(os.path.realpath(where))
        if not target.is_dir() and ws.contains(target) and not ws.shown(where):
            out.hidden += 1
            continue
        if child.is_symlink():
            shown = ws.display(target) if ws.contains(target) else "(outside the workspace)"
            slash = "/" if ws.contains(target) and target.is_dir() else ""
            out.entries.append(f"{rel}{slash} -> {shown}")
        elif is_dir:
            out.entries.append(rel + "/")
            if depth > 1:
                try:
                    sub = os.open(child.name, DIRECTORY_FLAGS, dir_fd=fd)
                except OSError as exc:  # replaced (by a link?) since it was listed
                    out.entries.append(f"{rel}/[unreadable: {exc.strerror or exc}]")
                    continue
                try:
                    _walk(ws, sub, base, rel + "/", depth - 1, ignore, out, signal)
                finally:
                    os.close(sub)
        else:
            out.entries.append(rel)


def make_list_directory(workspace: Workspace) -> AgentTool:
    """Build `list_directory` bound to `workspace`."""

    async def execute(
        tool_call_id: str, params: ListDirectoryParams, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        try:
            fd, shown = workspace.open(params.path, DIRECTORY_FLAGS)
        except NotADirectoryError as exc:
            shown = exc.filename
            if not workspace.shown(workspace.root / shown):
                raise workspace.not_found(shown) from None
            raise NotADirectoryError(f"{shown} is a file, not a directory; use read_file") from None
        listing = _Listing()
        try:
            await anyio.to_thread.run_sync(
                _walk, workspace, fd, shown, "", params.depth, params.ignore, listing, signal
            )
        finally:
            os.close(fd)
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
