"""The user's config file (`config.toml`): where it is, its one model, its one loader.

One file holds every setting a person keeps between runs. `load_config` reads it once
(again only when the file changes) into `UserConfig`, which knows every table: an
unknown table or key is an error that names the file and the line. Each part then
checks the contents of its own table: model profiles (`providers.settings`), prices
(`pricing`), MCP servers (`mcp.config`), the variables `run_command` passes on
(`workbench.tools.command_env`) and the caps on content (`[limits]`, `agent.content_caps`).
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workbench.agent.content_caps import ContentCaps


class McpTables(BaseModel):
    """`[mcp]`: `[mcp.servers.NAME]` tables (checked by `mcp.config`)."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, Any] = Field(default_factory=dict)


class CommandsTable(BaseModel):
    """`[commands]`: what `run_command` passes on."""

    model_config = ConfigDict(extra="forbid")

    pass_env: list[str] = Field(default_factory=list)
    """Names of environment variables a command sees besides the safe ones."""

    @field_validator("pass_env", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(n, str) and n for n in value):
            raise ValueError("must be a list of variable names")
        return value


class UserConfig(BaseModel):
    """Every table the config file may hold."""

    model_config = ConfigDict(extra="forbid")

    default_profile: str | None = None
    profiles: dict[str, Any] = Field(default_factory=dict)
    """`[profiles.NAME]`: model endpoints (checked by `providers.settings`)."""
    prices: dict[str, Any] = Field(default_factory=dict)
    """`[prices.MODEL]`: prices per million tokens (checked by `pricing`)."""
    mcp: McpTables = Field(default_factory=McpTables)
    commands: CommandsTable = Field(default_factory=CommandsTable)
    limits: dict[str, Any] | None = None
    """`[limits]`: caps on content (checked by `ContentCaps.from_table`)."""
    path: Path | None = Field(default=None, exclude=True)
    """The file it was read from (None: there was none)."""


def default_config_path(environ: Mapping[str, str] = os.environ) -> Path:
    """`$WORKBENCH_CONFIG`, else `agent-workbench/config.toml` under the XDG config home."""
    if environ.get("WORKBENCH_CONFIG"):
        return Path(environ["WORKBENCH_CONFIG"]).expanduser()
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "agent-workbench" / "config.toml"


_READ: dict[Path, tuple[str, UserConfig]] = {}
"""Each file's text when last read, and what it held: the parts of one run read the file
but parse and check it once (again only when its text changed)."""


def load_config(path: Path, *, required: bool = False) -> UserConfig:
    """The config file at `path`; a missing file is empty unless `required`.

    Raises:
        ValueError: the file cannot be read, is not valid TOML, holds an unknown table
            or key, or a value of the wrong kind (each naming the file and the line), or
            (if `required`) does not exist.
    """
    if not path.exists():
        if required:
            raise ValueError(f"Config file not found: {path}")
        return UserConfig()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"Cannot read config file {path}: {exc}") from None
    known = _READ.get(path)
    if known is not None and known[0] == text:
        return known[1]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"Cannot read config file {path}: {exc}") from None
    try:
        config = UserConfig.model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_message(path, text, exc, UserConfig)) from None
    config.path = path
    _READ[path] = (text, config)
    return config


def config_caps(config: Path | None) -> ContentCaps:
    """The caps of the config file's `[limits]` table (`config`: --config; None: the
    default file, which may be missing).

    Raises:
        ValueError: the file is bad (see `load_config`), or `[limits]` holds an unknown
            name or a value that is not a positive integer.
    """
    path = config or default_config_path()
    limits = load_config(path, required=config is not None).limits
    return ContentCaps.from_table(limits, f"{path}: [limits]")


# -- errors that name the line -------------------------------------------------------


def validation_message(
    path: Path, text: str, exc: ValidationError, model: type[BaseModel], within: Sequence[str] = ()
) -> str:
    """The first error of `exc` as one line: `FILE:LINE: ...`, with the nearest known
    key for an unknown one. `within`: where the validated table sits in the file
    (`("tool", "workbench")` for `pyproject.toml`)."""
    err = exc.errors(include_url=False)[0]
    loc = [str(part) for part in err["loc"]]
    where = ".".join(loc)
    full = [*within, *loc]
    line = next((n for end in range(len(full), 0, -1) if (n := line_of(text, full[:end]))), None)
    at = f"{path}:{line}" if line else str(path)
    if err["type"] == "value_error":  # a validator's own words, without pydantic's prefix
        return f"{at}: {where}: {err['ctx']['error']}"
    if err["type"] != "extra_forbidden":
        return f"{at}: {where}: {err['msg']}"
    table: Any = model
    for part in loc[:-1]:  # the model of the table the key is in, for its known keys
        field = table.model_fields.get(part) if hasattr(table, "model_fields") else None
        annotation = getattr(field, "annotation", None)
        table = next((a for a in getattr(annotation, "__args__", (annotation,)) if a), annotation)
    known = sorted(k for k in getattr(table, "model_fields", {}) if k != "path")
    near = difflib.get_close_matches(loc[-1], known, n=1)
    guess = f"; did you mean {near[0]!r}?" if near else ""
    return f"{at}: unknown key {where!r}{guess}" + (
        f" (known keys here: {', '.join(known)})" if known else ""
    )


def line_of(text: str, key: Sequence[str]) -> int | None:
    """The line (from 1) where the TOML `text` sets `key` (a dotted path), or opens a
    table at or under it; None when it cannot be told (an inline table, a quoted key
    holding a dot)."""
    table: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):
            inner = line.strip("[]").split("#")[0].strip().strip("]").strip()
            table = [_bare(part) for part in inner.split(".")]
            found = table
        elif "=" in line and not line.startswith("#"):
            found = [*table, *(_bare(part) for part in line.split("=", 1)[0].split("."))]
        else:
            continue
        if found[: len(key)] == list(key):
            return number
    return None


def _bare(part: str) -> str:
    return part.strip().strip("\"'")
