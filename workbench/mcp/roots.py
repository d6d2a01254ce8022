"""The roots offered to each MCP server (`roots/list`).

By default a server is offered the run's workspace and the directories its own
command line names: server-filesystem takes its allowed directories from its
arguments, and a client whose roots were only the workspace would replace them (the
server follows the client's roots once it has any). `roots = [...]` in a server's
config sets them (relative paths from the workspace); `roots = []` offers none (the
server keeps to its own arguments).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from workbench.mcp.config import McpServerConfig


def default_roots(config: McpServerConfig, workspace: Sequence[Path]) -> list[Path]:
    """The workspace, then each argument of the server's command that is a directory."""
    roots = [w.resolve() for w in workspace]
    base = Path(config.cwd) if config.cwd else Path.cwd()
    for word in (config.command or ())[1:]:
        if word.startswith("-") or "://" in word:
            continue
        path = Path(word).expanduser()
        path = path if path.is_absolute() else base / path
        try:
            if path.is_dir() and path.resolve() not in roots:
                roots.append(path.resolve())
        except OSError:
            continue
    return roots


def roots_for(config: McpServerConfig, workspace: Sequence[Path]) -> list[Path]:
    """The roots to offer `config`'s server (see the module's text); `workspace` is
    the run's workspace (as a list: none, or one)."""
    if config.roots is None:
        return default_roots(config, workspace)
    base = workspace[0] if workspace else Path.cwd()
    return [resolved(text, base) for text in config.roots]


def resolved(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def parse_roots(lines: Sequence[str], base: Path) -> list[Path]:
    """Roots typed one per line (blank lines skipped).

    Raises:
        ValueError: a line that is not an existing directory.
    """
    roots = []
    for line in lines:
        if not line.strip():
            continue
        path = resolved(line.strip(), base)
        if not path.is_dir():
            raise ValueError(f"{line.strip()}: not a directory")
        roots.append(path)
    return roots
