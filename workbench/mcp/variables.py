"""Variables in an mcp.json entry, expanded as the clients that write these files do.

- `${env:NAME}` (VS Code, Cursor) and `${NAME}` / `${NAME:-default}` (Claude Code):
  the workbench's environment; a variable that is not set, with no default, is an
  error naming it (never sent as the literal text, nor silently as nothing);
- `${workspaceFolder}`, `${workspaceFolderBasename}`: the folder the file belongs to
  (the parent of `.vscode/` or `.cursor/`, else the file's own folder);
- `${userHome}`, `${pathSeparator}` (`${/}`);
- `${input:ID}` (VS Code's prompted inputs): an error naming the input and its
  description: the workbench does not prompt for them, so the value goes in `env`;
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

from workbench.secret_env import environment

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
EXPANDED = ("command", "args", "env", "cwd", "url", "headers", "envFile", "serverUrl")


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
            about = self.inputs.get(key, {}).get("description")
            said = f" ({about})" if about else ""
            raise ValueError(
                f"${{input:{key}}}{said} is asked for by the editor that wrote this file; the "
                "workbench does not prompt for it: put the value in the entry's env"
            )
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
