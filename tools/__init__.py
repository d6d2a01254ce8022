"""The built-in tools: files (read, list, search, write, edit) and shell commands.

`builtin_tools(workspace)` returns all six bound to one workspace root. Every file
tool is confined to that root (see `workbench.tools.workspace`); `run_command` runs in it.
Nothing here imports Textual or Rich.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from workbench.agent import AgentTool
from workbench.tools.edit_file import make_edit_file
from workbench.tools.list_directory import make_list_directory
from workbench.tools.read_file import make_read_file
from workbench.tools.run_command import make_run_command
from workbench.tools.search_files import make_search_files
from workbench.tools.workspace import Workspace, WorkspaceError
from workbench.tools.write_file import make_write_file

READ_ONLY_TOOLS = ("read_file", "list_directory", "search_files")
"""Built-ins that never change anything (the permission gate allows them by default)."""


def builtin_tools(
    workspace: Path | str,
    may_read: Callable[[str], bool] | None = None,
    *,
    pass_env: Iterable[str] = (),
) -> list[AgentTool]:
    """The six built-in tools, bound to the workspace root `workspace`.

    `may_read` (the permission gate's) says which files the reading tools may
    show: `search_files` and `list_directory` leave out what `read_file` may not read.
    `pass_env` names environment variables `run_command` passes on beyond its allow-list.
    """
    ws = Workspace(workspace, may_read)
    return [
        make_read_file(ws),
        make_list_directory(ws),
        make_search_files(ws),
        make_write_file(ws),
        make_edit_file(ws),
        make_run_command(ws, pass_env),
    ]


__all__ = ["READ_ONLY_TOOLS", "Workspace", "WorkspaceError", "builtin_tools"]
