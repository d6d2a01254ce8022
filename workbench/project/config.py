"""The project file: `workbench.toml` (or `[tool.workbench]` in `pyproject.toml`).

In the directory where you run `workbench`, it names your agent, so a bare
`workbench` opens *your* tools, prompt and model instead of the demo. Every key is
optional; a flag given on the command line wins over the file. Paths are relative
to the file's directory. `workbench init` writes a commented starter (`STARTER`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workbench.config_file import validation_message
from workbench.workspace_scan import CheckpointCaps

FILE_NAME = "workbench.toml"


class PrunePolicy(BaseModel):
    """`[sessions] prune`: what `workbench sessions prune` deletes, at each recorded run's
    start (a fork's parent stays, and the run says so)."""

    model_config = ConfigDict(extra="forbid")

    older_than: str | None = None
    """An age: "30d", "12h", "2w"."""
    keep: int | None = Field(default=None, ge=0)
    """Keep the newest N."""
    max_size: str | None = None
    """The oldest go until the rest fit: "2GB", "500MB"."""

    @field_validator("older_than")
    @classmethod
    def _an_age(cls, value: str | None) -> str | None:
        if value is not None:
            _checked(_age, value)
        return value

    @field_validator("max_size")
    @classmethod
    def _a_size(cls, value: str | None) -> str | None:
        if value is not None:
            _checked(_size, value)
        return value

    @property
    def older_than_seconds(self) -> float | None:
        return None if self.older_than is None else _age(self.older_than)

    @property
    def max_size_bytes(self) -> int | None:
        return None if self.max_size is None else _size(self.max_size)


def _age(text: str) -> float:
    from workbench.sessions.prune import age

    return age(text)


def _size(text: str) -> int:
    from workbench.sessions.prune import size

    return size(text)


def _checked(parse: Any, value: str) -> None:
    import argparse

    try:
        parse(value)
    except argparse.ArgumentTypeError as exc:
        raise ValueError(str(exc)) from None


class SessionsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prune: PrunePolicy | None = None


class RerunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ignore: list[str] = Field(default_factory=list)
    """Regular expressions of volatile text masked in results before a re-run (or
    `pytest --workbench-sessions`, or `workbench diff`) compares them."""


class ProjectConfig(BaseModel):
    """What a project file may say (the CLI's flags of the same names)."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] = Field(default_factory=list)
    """`--tools` specs: files, modules, `file.py:attr`."""
    builtin_tools: list[str] | None = None
    """Built-in tools to offer (`[]`: none; absent: all)."""
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    profile: str | None = None
    """A `[profiles.NAME]` of your config file (the model endpoint)."""
    model: str | None = None
    base_url: str | None = None
    tool_choice: str | None = None
    tool_choice_sticky: bool | None = None
    scenario: str | None = None
    """A scripted scenario (JSON file) for running without a model."""
    rules: str | None = None
    """The permission rules file."""
    workspace: str | None = None
    max_turns: int | None = Field(default=None, ge=1)
    mcp: dict[str, Any] = Field(default_factory=dict)
    """`[mcp.servers.NAME]` tables, as in the config file, and `[mcp] config`: an
    `mcpServers` JSON file (or a list of them) as Claude Desktop, Cursor or VS Code keep."""
    sessions: SessionsConfig | None = None
    """`[sessions] prune = {...}`: the recorded sessions pruned at each run's start."""
    rerun: RerunConfig | None = None
    """`[rerun] ignore = [...]`: masks for volatile output in re-runs."""
    checkpoints: CheckpointCaps | None = None
    """`[checkpoints]`: the bounds of the workspace files each session records
    (`enabled`, `max_file_bytes`, `max_total_bytes`, `max_files`)."""
    acp: dict[str, Any] | None = None
    """`[acp]`: the ACP agent `workbench acp` starts (`command`, `args`, `env`, `mode`);
    read by `workbench.acp.config`."""
    path: Path | None = Field(default=None, exclude=True)
    """The file it was read from."""

    @field_validator("builtin_tools", mode="before")
    @classmethod
    def _none_means_empty(cls, value: Any) -> Any:
        return [] if value == "none" else value

    @property
    def directory(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def resolve(self, value: str | None) -> Path | None:
        """A path from the file, relative to its directory."""
        if value is None:
            return None
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.directory / path

    def mcp_servers(self) -> list[Any]:
        from workbench.mcp.config import load_mcp_json, servers_from_tables

        if not self.mcp:
            return []
        servers = servers_from_tables(self.mcp.get("servers", {}), str(self.path), self.directory)
        catalogs = self.mcp.get("config") or []
        for catalog in [catalogs] if isinstance(catalogs, str) else catalogs:
            path = self.resolve(str(catalog))
            assert path is not None
            servers += load_mcp_json(path)
        return servers


def find_project(directory: Path) -> ProjectConfig | None:
    """The project file of `directory`: `workbench.toml`, else `[tool.workbench]` of
    `pyproject.toml`; None when there is neither.

    Raises:
        ValueError: the file cannot be read or holds an unknown or invalid key (named,
            with its line).
    """
    path = directory / FILE_NAME
    if path.is_file():
        text, data = _read(path)
        return load_project(path, data, text)
    pyproject = directory / "pyproject.toml"
    if pyproject.is_file():
        text, data = _read(pyproject)
        table = data.get("tool", {}).get("workbench")
        if isinstance(table, dict):
            return load_project(pyproject, table, text, ("tool", "workbench"))
    return None


def load_project(
    path: Path, data: dict[str, Any], text: str = "", within: tuple[str, ...] = ()
) -> ProjectConfig:
    """`data`, the project table read from `path` (whose `text` names the line of an
    error; `within`: where the table sits in it)."""
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_message(path, text, exc, ProjectConfig, within)) from None
    config.path = path
    return config


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"Cannot read {path}: {exc}") from None


STARTER = """\
# workbench.toml: the agent `workbench` opens in this directory.
# Every key is optional; a command-line flag wins over what is written here.
# Paths are relative to this file.

# Your tools: Python files or modules (file.py:NAME picks one object).
# A tool is an AgentTool, a @tool function, a list of them, or a function
# whose parameters all have type hints.
tools = ["agent_tools.py"]

# The built-in tools to offer as well: any of read_file, list_directory,
# search_files, write_file, edit_file, run_command ([] for none).
# builtin_tools = ["read_file", "list_directory"]

# The system prompt, inline or from a file.
system_prompt = "You are a careful assistant. Use the tools to answer."
# system_prompt_file = "prompt.md"

# The model: a profile of ~/.config/agent-workbench/config.toml, or a server.
# profile = "local"
# base_url = "http://localhost:11434/v1"
# model = "qwen3:8b"
# tool_choice = "required"        # forced until the first tool call, then auto
# tool_choice_sticky = true       # ...or forced for the whole run

# Without a model: a scripted scenario (see examples/ in the workbench repo).
# scenario = "scenario.json"

# Where the tools run, and the permission rules.
# workspace = "."
# rules = ".workbench/rules.toml"

# Stop each run after this many model turns.
max_turns = 10

# The workspace files each session records, so `workbench restore` and forks can
# go back to any turn (a file or a scan past a cap is left out and listed).
# [checkpoints]
# max_file_bytes = 8388608     # 8 MB
# max_total_bytes = 268435456  # 256 MB read by one scan
# max_files = 20000
# enabled = true

# MCP servers (their tools join yours as SERVER__TOOL).
# [mcp.servers.memory]
# command = ["npx", "-y", "@modelcontextprotocol/server-memory"]
#
# Or the mcpServers JSON you already keep for Claude Desktop, Cursor or VS Code:
# [mcp]
# config = ".cursor/mcp.json"

# Re-runs (`workbench rerun`, `pytest --workbench-sessions DIR`, `workbench diff`):
# volatile text in results (times, ids) masked before they are compared.
# [rerun]
# ignore = ['[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+']

# Recorded sessions: delete old ones at the start of each recorded run (any rule
# may delete a session; one a fork names as its parent stays, and the run says so).
# [sessions.prune]
# older_than = "30d"
# keep = 500
# max_size = "2GB"

# The ACP agent `workbench acp` opens when no command follows `--` (docs/acp.md).
# [acp]
# command = "claude-code-acp"
# args = []
# env = { IS_SANDBOX = "1" }
"""


def write_starter(directory: Path) -> Path:
    """Write `workbench.toml` in `directory`.

    Raises:
        FileExistsError: there is one already (it is never overwritten).
    """
    path = directory / FILE_NAME
    with path.open("x", encoding="utf-8") as out:
        out.write(STARTER)
    return path
