"""The first line of every session file: what was run, with what, where.

A session is only useful later if it says which model answered, which tools (and
schemas) it could call and in which workspace, so replay can label things, re-run
can rebuild the tools and fork can pick the model again. What it never holds is a
secret: the model is described by id, provider and base URL only (an API key lives
in a `SecretStr` in the provider settings and is never read here), and provider
request events carry their headers with auth-bearing ones already stripped.

The format is versioned (`FORMAT_VERSION`); a reader refuses a newer version with
a clear message instead of misreading it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workbench import __version__
from workbench.agent import AgentTool, Model

FORMAT: Literal["agent-workbench-session"] = "agent-workbench-session"
"""The `format` field of every header line: what kind of file this is."""
FORMAT_VERSION = 1
"""Bumped when a line's shape changes in a way an older reader would misread."""
SESSIONS_DIR_ENV = "WORKBENCH_SESSIONS_DIR"
"""Overrides the default directory (tests and CI point it at a temporary one)."""


class ToolInfo(BaseModel):
    """One tool as the model saw it."""

    name: str
    label: str = ""
    description: str = ""
    source: str | None = None
    """Where the tool came from ("builtin", "mcp:server", ...), if known."""
    json_schema: dict[str, Any] = Field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    """The JSON Schema of its results' structured content, if it declares one."""


class ModelInfo(BaseModel):
    """Which model answered: never a key, never a header."""

    id: str
    provider: str
    base_url: str | None = None


class ParentInfo(BaseModel):
    """Where a forked session came from."""

    path: str
    """The parent session file."""
    turn: int
    """The parent's turn the fork continued after (0: before the first turn)."""
    events: int
    """How many of the parent's events were copied to the start of this file."""


class RecordedServer(BaseModel):
    """An MCP server as the session records it: how to start it again, never its
    secrets (its `env` and HTTP header values are left out)."""

    name: str
    command: list[str] | None = None
    url: str | None = None
    cwd: str | None = None


class AgentSetup(BaseModel):
    """How the agent was assembled, so `rerun` and a fork can build it again."""

    tool_specs: list[str] = Field(default_factory=list)
    """The `--tools` specs, as given."""
    project_dir: str | None = None
    """Where the specs were found (absolute)."""
    builtin_tools: list[str] | None = None
    """The built-ins chosen (None: all)."""
    mcp_servers: list[RecordedServer] = Field(default_factory=list)
    signature: str | None = None
    """An HMAC by this user's key (`workbench.sessions.trust`): the setup was written by
    a workbench of theirs, so re-running it starts nothing a stranger put there."""


class SessionHeader(BaseModel):
    """The header line. Unknown fields are kept, so a newer minor writer still reads."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["header"] = "header"
    format: Literal["agent-workbench-session"] = FORMAT
    version: int = FORMAT_VERSION
    workbench_version: str = __version__
    created: float = Field(default_factory=lambda: time.time() * 1000.0)
    """Epoch milliseconds."""
    model: ModelInfo
    system_prompt: str = ""
    tools: list[ToolInfo] = Field(default_factory=list)
    workspace: str = ""
    scenario: str | None = None
    """The scripted scenario's name (None for a live model)."""
    scenario_data: dict[str, Any] | None = None
    """The whole scenario, so the session can be re-run and forked on its own."""
    parent: ParentInfo | None = None
    setup: AgentSetup | None = None
    """How to build the agent again (None: the built-in tools only)."""


def tool_info(tool: AgentTool) -> ToolInfo:
    """Describe a tool by what the model saw of it (schema failures are not fatal)."""
    try:
        schema = tool.json_schema
        output = tool.output_json_schema
    except Exception as exc:  # noqa: BLE001 - a tool with a broken schema still records
        schema, output = {"error": f"{type(exc).__name__}: {exc}"}, None
    return ToolInfo(
        name=tool.name,
        label=tool.label,
        description=tool.description,
        source=getattr(tool, "source", None),
        json_schema=schema,
        output_schema=output,
    )


def build_header(
    *,
    model: Model,
    tools: Sequence[AgentTool],
    workspace: Path | str,
    system_prompt: str = "",
    scenario: Any = None,
    parent: ParentInfo | None = None,
    setup: AgentSetup | None = None,
) -> SessionHeader:
    """The header for a run of `model` with `tools` in `workspace`.

    Args:
        scenario: the scripted `Scenario`, if the model is scripted (stored whole).
    """
    return SessionHeader(
        model=ModelInfo(id=model.id, provider=model.provider, base_url=model.base_url),
        system_prompt=system_prompt,
        tools=[tool_info(t) for t in tools],
        workspace=str(workspace),
        scenario=getattr(scenario, "name", None),
        scenario_data=scenario.model_dump(mode="json") if scenario is not None else None,
        parent=parent,
        setup=signed(setup) if setup is not None else None,
    )


def signed(setup: AgentSetup) -> AgentSetup:
    from workbench.sessions.trust import sign

    return setup.model_copy(update={"signature": sign(setup)})


def default_session_dir() -> Path:
    """`$WORKBENCH_SESSIONS_DIR`, else `sessions/` in the user's data directory."""
    override = os.environ.get(SESSIONS_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path("agent-workbench", appauthor=False) / "sessions"


def default_session_path(label: str, directory: Path | None = None) -> Path:
    """A new file name `<YYYYmmdd-HHMMSS>-<label>.jsonl` that does not exist yet."""
    directory = directory or default_session_dir()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.")[:40] or "session"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = directory / f"{stamp}-{slug}.jsonl"
    n = 2
    while path.exists():
        path = directory / f"{stamp}-{slug}-{n}.jsonl"
        n += 1
    return path
