"""Which MCP servers to start: `--mcp`, `--mcp-url` and the config file's `[mcp.servers.*]`.

A server is a command to run (stdio) or a URL (streamable HTTP). Each gets a
short name that prefixes its tools (`files__read_file`), so it must be unique and
made of letters, digits, `-` and single `_`: a name from the config file is kept
(cleaned up if needed), one from a flag is derived from the command (the script
or package it runs, not the interpreter) or from the URL's host.

The config file is the one the provider settings read (`--config`, else
`$WORKBENCH_CONFIG`, else `~/.config/agent-workbench/config.toml`):

    [mcp.servers.files]
    command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
    env = { LOG_LEVEL = "error" }

    [mcp.servers.search]
    url = "http://127.0.0.1:8000/mcp"

Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from workbench.config_file import load_config
from workbench.mcp.variables import McpInput, fill_inputs, unmarked

DEFAULT_STARTUP_TIMEOUT = 20.0
"""Seconds a server gets to start, answer `initialize` and list its tools."""

_LAUNCHERS = {
    "python",
    "python3",
    "py",
    "node",
    "nodejs",
    "npx",
    "npm",
    "pnpm",
    "pnpx",
    "yarn",
    "bun",
    "bunx",
    "deno",
    "uv",
    "uvx",
    "pipx",
    "docker",
    "podman",
    "sh",
    "bash",
}
"""Commands that run something else: the server is named after what they run."""
_SUBCOMMANDS = {"run", "x", "exec", "dlx", "tool"}


class McpServerConfig(BaseModel):
    """One MCP server to start: a command (stdio) or a URL (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The prefix of its tools' names (`name__tool`); see `clean_name`."""
    command: tuple[str, ...] | None = None
    """The program and its arguments, for a stdio server."""
    url: str | None = None
    """The endpoint of a streamable-HTTP server, e.g. `http://127.0.0.1:8000/mcp`."""
    sse: bool = False
    """`url` speaks the older HTTP+SSE transport (e.g. `http://127.0.0.1:8000/sse`)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for a stdio server (over a safe default set)."""
    cwd: str | None = None
    """Working directory for a stdio server (default: the workbench's own)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers for a URL server (e.g. an Authorization header)."""
    oauth: bool = True
    """A URL server that answers 401 is authorized with OAuth (a person opens the URL
    shown; see `workbench.mcp.oauth`); False: a 401 fails the start. Never with an
    Authorization header of your own."""
    trust_hints: bool = False
    """Believe the server's `readOnlyHint`s: such tools are then allowed by default, like
    the built-in readers (see `workbench.permissions.hints`)."""
    use_instructions: bool = False
    """Add the `instructions` of the server's `initialize` answer to the system prompt."""
    roots: tuple[str, ...] | None = None
    """The directories offered to the server as its roots (relative ones from the
    workspace); None: the workspace and the directories its command names (see
    `workbench.mcp.roots`); empty: none."""
    enabled: bool = True
    """False: configured but not started (the MCP servers view can start it)."""
    startup_timeout: float = Field(default=DEFAULT_STARTUP_TIMEOUT, gt=0)
    """Seconds to start, initialize and list tools before the server counts as failed."""
    source: str = "flag"
    """Where the server was configured (`--mcp`, `--mcp-url`, `config.toml`), for messages."""
    inputs: tuple[McpInput, ...] = ()
    """The `${input:ID}`s of its mcp.json entry, still to be given (see `with_inputs`)."""

    @field_validator("command", mode="before")
    @classmethod
    def _split_command(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = shlex.split(value)
        if value is not None and (not value or not all(isinstance(v, str) for v in value)):
            raise ValueError("command must be a non-empty list of strings (or a command line)")
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"Bad MCP server URL {value!r}: expected http(s)://host[:port]/path")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs either command or url (not both)")
        if self.sse and self.url is None:
            raise ValueError("sse = true needs a url")
        return self

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        if self.command is not None:
            return "stdio"
        return "sse" if self.sse else "http"

    def with_inputs(self, values: Mapping[str, str]) -> McpServerConfig:
        """This server with its inputs filled in from `values` (id -> value).

        Raises:
            KeyError: an input is not in `values`.
        """
        fields = ("command", "url", "env", "cwd", "headers")
        update = {f: fill_inputs(getattr(self, f), values) for f in fields}
        return self.model_copy(update={**update, "inputs": ()})

    @property
    def target(self) -> str:
        """The command line or the URL, for messages."""
        return unmarked(shlex.join(self.command) if self.command is not None else str(self.url))


def clean_name(name: str) -> str:
    """A server name usable as a tool-name prefix: letters, digits, `-`, single `_`."""
    text = re.sub(r"[^A-Za-z0-9_-]+", "-", name)
    text = re.sub(r"_{2,}", "_", text).strip("-_")
    return text[:32].strip("-_") or "mcp"


def name_for_command(command: Sequence[str]) -> str:
    """`python servers/files.py` -> `files`; `npx -y @scope/server-git@1.0` -> `server-git`;
    `python -m pkg.server` -> `server`; `/usr/bin/weather-mcp` -> `weather-mcp`;
    `node .../server-everything/dist/index.js stdio` -> `server-everything`;
    `env LOG=1 npx -y pkg` -> `pkg`; `python -c CODE` -> `python`."""
    words = _skip_wrappers(list(command)) or ["mcp"]
    pick = words[0]
    if _is_launcher(pick):
        args = words[1:]
        if "-m" in args and args.index("-m") + 1 < len(args):
            return clean_name(args[args.index("-m") + 1].rsplit(".", 1)[-1])
        if {"-c", "-e", "--eval"} & set(args):  # inline code: name it after the interpreter
            return clean_name(PurePosixPath(pick).name)
        rest = [w for w in args if not w.startswith("-") and w not in _SUBCOMMANDS]
        pick = rest[0] if rest else pick
    return clean_name(_stem(pick))


def _skip_wrappers(words: list[str]) -> list[str]:
    """The command without leading `NAME=value` assignments and `env`'s own options."""
    while words:
        first = words[0]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", first):
            words = words[1:]
        elif PurePosixPath(first).name == "env":
            words = words[1:]
            while words and words[0].startswith("-"):
                takes_value = words[0] in ("-u", "--unset", "-C", "--chdir", "-S")
                words = words[2:] if takes_value else words[1:]
        else:
            return words
    return words


def _stem(path: str) -> str:
    """A script's or package's name: its file stem, or for a generic entry file
    (`index.js`, `main.py`, `__main__.py`) the nearest meaningful folder above it."""
    parts = PurePosixPath(path).parts
    stem = parts[-1] if parts else path
    if "@" in stem[1:]:  # package@1.2.3
        stem = stem[: stem.index("@", 1)]
    for suffix in (".py", ".js", ".mjs", ".cjs", ".ts", ".exe"):
        stem = stem.removesuffix(suffix)
    if stem in _GENERIC_FILES:
        for folder in reversed(parts[:-1]):
            if folder not in _GENERIC_FOLDERS and folder not in ("/", ".", ".."):
                return folder
    return stem


_GENERIC_FILES = {"index", "main", "__main__", "cli", "server", "app", "run", "start"}
_GENERIC_FOLDERS = {"dist", "build", "lib", "src", "bin", "out", "esm", "cjs", "node_modules"}


def _is_launcher(word: str) -> bool:
    name = PurePosixPath(word).name
    return name in _LAUNCHERS or re.fullmatch(r"python[0-9.]*", name) is not None


def name_for_url(url: str) -> str:
    """The host, and the port when the URL names one: `http://127.0.0.1:8000/mcp` ->
    `127-0-0-1-8000`, `https://a.example/mcp` -> `a-example` (two local servers differ
    by their ports)."""
    parts = urlparse(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "mcp"
    return clean_name(f"{host}-{port}" if port is not None else host)


def unique_names(servers: Iterable[McpServerConfig]) -> list[McpServerConfig]:
    """The servers with names made unique in order (`files`, `files-2`, ...)."""
    out: list[McpServerConfig] = []
    taken: set[str] = set()
    for server in servers:
        base = clean_name(server.name)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        out.append(server if name == server.name else server.model_copy(update={"name": name}))
    return out


def server_from_command(line: str) -> McpServerConfig:
    """A `--mcp 'COMMAND ARGS'` value (split like a shell would)."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ValueError(f"Bad --mcp command {line!r}: {exc}") from None
    if not words:
        raise ValueError("--mcp needs a command, e.g. --mcp 'python my_server.py'")
    return McpServerConfig(name=name_for_command(words), command=tuple(words), source="--mcp")


def server_from_url(url: str, *, sse: bool = False) -> McpServerConfig:
    """A `--mcp-url URL` (or `--mcp-sse URL`) value."""
    source = "--mcp-sse" if sse else "--mcp-url"
    try:
        return McpServerConfig(name=name_for_url(url), url=url, sse=sse, source=source)
    except ValidationError as exc:
        raise ValueError(_first_error(exc)) from None


def servers_from_flags(specs: Sequence[tuple[str, str]]) -> list[McpServerConfig]:
    """The servers of `--mcp`, `--mcp-url` and `--mcp-sse`, in command-line order, each
    with the `--mcp-header/-env/-cwd/-timeout` values that follow it.

    Raises:
        ValueError: a modifier with no server before it, or a value that does not parse.
    """
    servers: list[McpServerConfig] = []
    for flag, value in specs:
        if flag == "--mcp":
            servers.append(server_from_command(value))
        elif flag in ("--mcp-url", "--mcp-sse"):
            servers.append(server_from_url(value, sse=flag == "--mcp-sse"))
        elif not servers:
            raise ValueError(f"{flag} {value!r} needs an MCP server flag before it")
        else:
            servers[-1] = _modified(servers[-1], flag, value)
    return servers


def _modified(server: McpServerConfig, flag: str, value: str) -> McpServerConfig:
    if flag == "--mcp-header":
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"{flag} {value!r}: expected 'NAME: VALUE'")
        if server.url is None:
            raise ValueError(f"{flag} is for URL servers; {server.name} is a command")
        update: dict[str, Any] = {"headers": {**server.headers, name.strip(): text.strip()}}
    elif flag == "--mcp-env":
        name, sep, text = value.partition("=")
        if not sep or not name:
            raise ValueError(f"{flag} {value!r}: expected NAME=VALUE")
        update = {"env": {**server.env, name: text}}
    elif flag == "--mcp-cwd":
        update = {"cwd": value}
    else:
        try:
            update = {"startup_timeout": float(value)}
        except ValueError:
            raise ValueError(f"{flag} {value!r}: expected a number of seconds") from None
    try:
        return McpServerConfig.model_validate({**server.model_dump(), **update})
    except ValidationError as exc:
        raise ValueError(f"{flag} {value!r}: {_first_error(exc)}") from None


def load_mcp_json(path: Path) -> list[McpServerConfig]:
    """The servers of a JSON file in the catalog format Claude Desktop, Cursor and VS Code
    use: `{"mcpServers": {NAME: {...}}}` (or VS Code's `{"servers": {...}}`), each with
    `command` + `args` (+ `env`, `cwd`) or `url` (+ `headers`, and `type` "sse" for the
    older transport). Entries turned off (`"disabled": true`) are kept, not started.
    Variables (`${env:X}`, `${X}`, `${workspaceFolder}`, `envFile`...) are expanded as
    those clients do (see `workbench.mcp.variables`).

    Raises:
        ValueError: the file cannot be read, or an entry is invalid (named).
    """
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"Cannot read MCP config {path}: {exc}") from None
    table = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise ValueError(f'{path} has no "mcpServers" object of servers')
    from workbench.mcp.variables import Expander, workspace_of

    expander = Expander(workspace_of(path), inputs=data.get("inputs"))
    servers = []
    for name, entry in table.items():
        if not isinstance(entry, dict):
            raise ValueError(f"Bad MCP server {name!r} in {path}: expected an object")
        try:
            entry = expander.entry(entry)
        except ValueError as exc:
            raise ValueError(f"Bad MCP server {name!r} in {path}: {exc}") from None
        kind = str(entry.get("type") or entry.get("transport") or "")
        fields: dict[str, Any] = {"name": name, "source": str(path)}
        fields["inputs"] = expander.used()
        fields["enabled"] = entry.get("disabled") is not True
        if "command" in entry:
            args = entry.get("args") or []
            if not isinstance(args, list):
                raise ValueError(f"Bad MCP server {name!r} in {path}: args must be a list")
            fields["command"] = [entry["command"], *args]
            fields |= {k: entry[k] for k in ("env", "cwd") if k in entry}
        elif "url" in entry or "serverUrl" in entry:
            fields["url"] = entry.get("url", entry.get("serverUrl"))
            fields["sse"] = kind == "sse"
            if "headers" in entry:
                fields["headers"] = entry["headers"]
        else:
            raise ValueError(f"Bad MCP server {name!r} in {path}: needs command or url")
        try:
            servers.append(McpServerConfig.model_validate(fields))
        except ValidationError as exc:
            raise ValueError(f"Bad MCP server {name!r} in {path}: {_first_error(exc)}") from None
    return servers


def load_mcp_servers(path: Path, *, required: bool = False) -> list[McpServerConfig]:
    """The `[mcp.servers.NAME]` tables of the config file (`load_config`; a missing file
    has none unless `required`).

    Raises:
        ValueError: the file cannot be read, or a server table is invalid (named).
    """
    tables = load_config(path, required=required).mcp.servers
    return servers_from_tables(tables, str(path))


def servers_from_tables(
    tables: Any, where: str, directory: Path | None = None
) -> list[McpServerConfig]:
    """`[mcp.servers.NAME]` tables as servers (`where` names the file in errors; a
    relative `cwd` is taken from `directory` when given)."""
    if not isinstance(tables, dict):
        raise ValueError(f"Bad [mcp.servers] in {where}: expected tables [mcp.servers.NAME]")
    servers = []
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ValueError(f"Bad MCP server {name!r} in {where}: expected a table")
        table = {**table, "name": name, "source": where}
        if directory is not None and isinstance(table.get("cwd"), str):
            table["cwd"] = str(directory / table["cwd"])
        try:
            servers.append(McpServerConfig.model_validate(table))
        except ValidationError as exc:
            raise ValueError(f"Bad MCP server {name!r} in {where}: {_first_error(exc)}") from None
    return servers


def resolve_servers(
    commands: Sequence[str] = (),
    urls: Sequence[str] = (),
    configured: Sequence[McpServerConfig] = (),
) -> list[McpServerConfig]:
    """Every server to start, config-file servers first, with unique names.

    Raises:
        ValueError: a command that does not split or a URL that is not http(s).
    """
    servers = [*configured]
    servers += [server_from_command(c) for c in commands]
    servers += [server_from_url(u) for u in urls]
    return unique_names(servers)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
