"""The user's config file (`config.toml`): where it is, and its tables.

One file holds every setting a person keeps between runs; each part reads its own
tables from it: model profiles (`providers.settings`), prices (`pricing`), MCP servers
(`mcp.config`), the variables `run_command` passes on (`tools.command_env`) and the
caps on content (`[limits]`, `agent.content_caps`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.agent.content_caps import ContentCaps


def default_config_path(environ: Mapping[str, str] = os.environ) -> Path:
    """`$WORKBENCH_CONFIG`, else `agent-workbench/config.toml` under the XDG config home."""
    if environ.get("WORKBENCH_CONFIG"):
        return Path(environ["WORKBENCH_CONFIG"]).expanduser()
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "agent-workbench" / "config.toml"


def read_config(path: Path, *, required: bool = False) -> dict[str, Any]:
    """The config file's tables; a missing file has none unless `required`.

    Raises:
        ValueError: the file cannot be read or is not valid TOML (or, if `required`,
            does not exist).
    """
    if not path.exists():
        if required:
            raise ValueError(f"Config file not found: {path}")
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"Cannot read config file {path}: {exc}") from None


def config_caps(config: Path | None) -> ContentCaps:
    """The caps of the config file's `[limits]` table (`config`: --config; None: the
    default file, which may be missing).

    Raises:
        ValueError: the file cannot be read, or `[limits]` holds an unknown name or a
            value that is not a positive integer.
    """
    path = config or default_config_path()
    data = read_config(path, required=config is not None)
    return ContentCaps.from_table(data.get("limits"), f"{path}: [limits]")
