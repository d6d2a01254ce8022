"""Variables in an mcp.json entry, expanded as the clients that write these files do.

- `${env:NAME}` (VS Code, Cursor) and `${NAME}` / `${NAME:-default}` (Claude Code):
  the workbench's environment; a variable that is not set, with no default, is an
  error naming it (never sent as the literal text, nor silently as nothing);
- `${workspaceFolder}`, `${workspaceFolderBasename}`: the folder the file belongs to
  (the parent of `.vscode/` or `.cursor/`, else the file's own folder);
- `${userHome}`, `${pathSeparator}` (`${/}`);
- `${input:ID}` (VS Code's prompted inputs): left as a mark (`input_mark`) that is
  never sent: the server's config lists the input (`McpInput`), and before the server
  starts the hub fills it (`fill_inputs`) from `$WORKBENCH_MCP_INPUT_<ID>`, else asks
  the person once (the app), else the server fails to start naming the input;
- `envFile` (VS Code, Cursor): a file of `NAME=value` lines (relative to the
  workspace folder) under the entry's own `env`.

Expanded in `command`, `args`, `env`, `cwd`, `url`, `headers` and `envFile`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from workbench.secret_env import environment

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
EXPANDED = ("command", "args", "env", "cwd", "url", "headers", "envFile", "serverUrl")
_MARK = re.compile("\ue000input:([^\ue001]*)\ue001")


class McpInput(BaseModel):
    """An `${input:ID}` of an mcp.json entry: asked for before the server starts."""

    model_config = ConfigDict(frozen=True)

    id: str
    description: str = ""
    password: bool = False

    @property
    def env_name(self) -> str:
        """The environment variable that gives it: `WORKBENCH_MCP_INPUT_<ID>`."""
        return "WORKBENCH_MCP_INPUT_" + re.sub(r"[^A-Za-z0-9]", "_", self.id).upper()


def input_mark(key: str) -> str:
    """What `${input:KEY}` stands as until it is filled (private-use characters, so no
    server is ever started with it: see `fill_inputs`)."""
    return f"\ue000input:{key}\ue001"


def fill_inputs(value: Any, values: Mapping[str, str]) -> Any:
    """`value` (text, or lists and dicts of it) with each input mark replaced.

    Raises:
        KeyError: an input of `value` is not in `values`.
    """
    if isinstance(value, str):
        return _MARK.sub(lambda m: values[m.group(1)], value)
    if isinstance(value, (list, tuple)):
        return type(value)(fill_inputs(v, values) for v in value)
    if isinstance(value, dict):
        return {k: fill_inputs(v, values) for k, v in value.items()}
    return value


def unmarked(text: str) -> str:
    """`text` with its input marks shown as the `${input:ID}` they stand for."""
    return _MARK.sub(lambda m: f"${{input:{m.group(1)}}}", text)


def workspace_of(path: Path) -> Path:
    """The workspace folder of an mcp.json at `path`."""
    folder = path.resolve().parent
    return folder.parent if folder.name in (".vscode", ".cursor") else folder


class Expander:
    """Expands the variables of one file's entries (`inputs` are its `inputs` list)."""

    def __init__(
        self, workspace: Path, environ: Mapping[str, str] | None = None, inputs: Any = None
    ) -> None:
        self.workspace = workspace
        # the workbench's secrets were moved out of `os.environ`: a server still gets them
        self.environ = environment() if environ is None else environ
        self.inputs = {
            str(i.get("id")): i for i in inputs or [] if isinstance(i, dict) and "id" in i
        }
        self.asked: dict[str, McpInput] = {}
        """The inputs the entries expanded so far use (`entry` resets it)."""

    def used(self) -> tuple[McpInput, ...]:
        """The inputs the last entry uses, in the order the file declares them."""
        order = list(self.inputs)
        rank = {key: order.index(key) if key in order else len(order) for key in self.asked}
        return tuple(sorted(self.asked.values(), key=lambda i: rank[i.id]))

    def text(self, value: str) -> str:
        """`value` with its variables replaced.

        Raises:
            ValueError: a variable that is not set, an input, or one not known.
        """
        return _VARIABLE.sub(lambda m: self._one(m.group(1)), value)

    def _one(self, name: str) -> str:
        if name.startswith("env:"):
            return self._env(name[4:], None)
        if name.startswith("input:"):
            key = name[6:]
            about = self.inputs.get(key, {})
            self.asked[key] = McpInput(
                id=key,
                description=str(about.get("description") or ""),
                password=about.get("password") is True,
            )
            return input_mark(key)
        fixed = {
            "workspaceFolder": str(self.workspace),
            "workspaceFolderBasename": self.workspace.name,
            "userHome": str(Path.home()),
            "pathSeparator": os.sep,
            "/": os.sep,
        }
        if name in fixed:
            return fixed[name]
        variable, sep, default = name.partition(":-")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
            return self._env(variable, default if sep else None)
        raise ValueError(f"${{{name}}}: not a variable the workbench knows")

    def _env(self, name: str, default: str | None) -> str:
        value = self.environ.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise ValueError(f"${{{name}}} names the environment variable {name}, which is not set")

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """`entry` with its fields expanded and its `envFile` read into `env`.

        Raises:
            ValueError: as `text`, or an envFile that cannot be read.
        """
        out = dict(entry)
        self.asked = {}
        for key in EXPANDED:
            if key in out:
                out[key] = self._deep(out[key])
        env_file = out.pop("envFile", None)
        if isinstance(env_file, str):
            path = Path(env_file).expanduser()
            path = path if path.is_absolute() else self.workspace / path
            env = out.get("env")
            env = env if isinstance(env, dict) else {}
            out["env"] = {**read_env_file(path), **env}
        return out

    def _deep(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._deep(v) for v in value]
        if isinstance(value, dict):
            return {k: self._deep(v) for k, v in value.items()}
        return value


def read_env_file(path: Path) -> dict[str, str]:
    """`NAME=value` lines (`export ` allowed, `#` comments, quotes stripped).

    Raises:
        ValueError: the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"envFile {path}: {exc.strerror or exc}") from None
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[name.strip()] = value
    return out
