"""Call patterns: "this tool, with arguments like these".

A pattern is a tool name (a glob: `*` is every tool) plus zero or more argument
globs, written compactly as `run_command(command="pytest *")` or
`write_file(path="src/**")`. Permission rules and stepper breakpoints share them.

How an argument glob matches depends on the argument's name, because the same
`*` means different things for a path and for a shell command:

- `path` (or any name ending in `path`): the value and the glob are normalised
  first (`./src/../a.py` -> `a.py`, so `..` cannot sneak past a prefix; the gate
  gives built-in tools' paths in the canonical form the tool opens); `*` and `?`
  stay within one path segment, `**` crosses segments (`src/**` is everything
  under src/, `**/*.py` every Python file).
- `command` / `cmd`: `*` matches any text except shell operators
  (`;` `&` `|` `` ` `` `$(` `<` `>` and newlines), so `pytest *` allows
  `pytest -q tests/` but not `pytest; rm -rf ~` or `pytest > ~/.bashrc`.
- anything else: `*` matches any text.

Matching is case-sensitive and anchored (the whole value must match). A
non-string value is matched as its JSON text. A pattern naming an argument the
call lacks does not match.

MCP tools are named `server__tool`, so `files__*` names every tool of the MCP
server `files`; `mcp:files` is a short form of it (and `mcp:*` names every MCP
tool). Both work wherever a tool pattern does: rules, flags, breakpoints.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

Style = Literal["path", "command", "text"]

_SHELL_SAFE = r"(?:(?!\$\()[^;&|`<>\n])"
"""One character a command glob's `*` may match: not a shell operator."""
_GLOB_CHARS = set("*?[")


class PatternError(ValueError):
    """A pattern (or rule) could not be parsed; the message says where and why."""


def style_of(arg_name: str) -> Style:
    if arg_name.endswith("path"):
        return "path"
    if arg_name in ("command", "cmd"):
        return "command"
    return "text"


def _translate(pattern: str, style: Style) -> str:
    """A glob as an anchored regular expression, per the module docstring's rules."""
    any_char = {"path": "[^/]", "command": _SHELL_SAFE, "text": "."}[style]
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if style == "path" and pattern.startswith("/", i):
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*" if style != "command" else f"{_SHELL_SAFE}*")
                continue
            out.append(f"{any_char}*")
        elif c == "?":
            out.append(any_char)
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1 and pattern[i + 1 : end] != "!":
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = "".join("\\" + ch if ch in "\\[&~|^" else ch for ch in body[negate:])
            out.append("[" + ("^" if negate else "") + body + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "(?s:" + "".join(out) + r")\Z"


def normalise_path(value: str) -> str:
    """`./a/../b/` -> `b`: the form path globs are matched against.

    Lexical only, and a backslash stays part of a name, as it is on POSIX. The
    gate hands built-in tools' paths over already canonical (the real path the
    tool opens, see `tools.workspace`), so for them this changes nothing.
    """
    return posixpath.normpath(value) if value else value


def _glob_text(glob: str, style: Style) -> str:
    """A path glob is normalised like the paths it is matched against (`./a/` is `a`)."""
    return normalise_path(glob) if style == "path" else glob


def _value_text(value: Any, style: Style) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return normalise_path(text) if style == "path" else text


@dataclass(frozen=True)
class CallPattern:
    """A tool-name glob and argument globs; see the module docstring."""

    tool: str
    args: tuple[tuple[str, str], ...] = ()
    """(argument name, glob) pairs, as written."""

    @cached_property
    def _compiled(self) -> tuple[re.Pattern[str], tuple[tuple[str, Style, re.Pattern[str]], ...]]:
        tool = re.compile(_translate(self.tool, "text"))
        args = tuple(
            (name, style, re.compile(_translate(_glob_text(glob, style), style)))
            for name, glob in self.args
            for style in [style_of(name)]
        )
        return tool, args

    def matches(self, tool_name: str, args: Mapping[str, Any]) -> bool:
        """Whether a call of `tool_name` with (validated) `args` fits this pattern."""
        tool_re, arg_res = self._compiled
        if not tool_re.match(tool_name):
            return False
        for name, style, regex in arg_res:
            if name not in args or args[name] is None:
                return False
            if not regex.match(_value_text(args[name], style)):
                return False
        return True

    @property
    def specificity(self) -> tuple[int, int, int]:
        """(argument globs, exact tool name, literal characters): bigger is more specific."""
        literal = sum(len(glob) - sum(glob.count(c) for c in "*?[]") for _, glob in self.args)
        exact = 0 if _GLOB_CHARS & set(self.tool) else 1
        return (len(self.args), exact, literal)

    def __str__(self) -> str:
        if not self.args:
            return self.tool
        inner = ", ".join(
            f"{name}={json.dumps(glob, ensure_ascii=False)}" for name, glob in self.args
        )
        return f"{self.tool}({inner})"

    @classmethod
    def parse(cls, text: str) -> CallPattern:
        """Parse `tool` or `tool(arg="glob", other='glob')`."""
        m = re.fullmatch(r"\s*([^\s()=\"']+)\s*(?:\((.*)\))?\s*", text, re.S)
        if m is None:
            raise PatternError(
                f'Cannot read pattern {text!r}: expected tool or tool(arg="glob", ...)'
            )
        return cls(_tool_glob(m.group(1)), _parse_args(m.group(2) or "", text))

    @classmethod
    def of(cls, tool: str, args: Mapping[str, str] | None = None) -> CallPattern:
        """Build from a tool glob and a mapping of argument globs (validated)."""
        tool = _tool_glob(tool)
        pairs = []
        for name, glob in (args or {}).items():
            if not _ARG_NAME.fullmatch(name):
                raise PatternError(
                    f"Invalid argument name {name!r}: a letter or '_', then letters, digits, "
                    "'_', '.' or '-'"
                )
            if not isinstance(glob, str):
                raise PatternError(f"Argument pattern for {name!r} must be a string, got {glob!r}")
            pairs.append((name, glob))
        return cls(tool, tuple(pairs))


_TOOL_NAME = re.compile(r"[^\s()\"'=]+")
_ARG_NAME = re.compile(r"[A-Za-z_][\w.-]*")


def _tool_glob(tool: str) -> str:
    """A tool name glob as written, checked, with `mcp:server` expanded."""
    if not _TOOL_NAME.fullmatch(tool) or not tool.isprintable():
        raise PatternError(
            f"Invalid tool name pattern {tool!r}: no spaces, quotes, '=', parentheses "
            "or control characters"
        )
    return mcp_server_glob(tool)


_MCP_SERVER = re.compile(r"mcp:([A-Za-z0-9_*?-]+)")
"""`mcp:` and a server name (or a glob of one); anything else after `mcp:` is a tool name."""


def mcp_server_glob(tool: str) -> str:
    """`mcp:files` -> `files__*` (every tool of MCP server `files`); other names as given."""
    m = _MCP_SERVER.fullmatch(tool)
    return f"{m.group(1)}__*" if m else tool


_ARG = re.compile(
    r"\s*([A-Za-z_][\w.-]*)\s*=\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*(,|$)", re.S
)


def _parse_args(inner: str, text: str) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    pos = 0
    inner = inner.strip()
    while pos < len(inner):
        m = _ARG.match(inner, pos)
        if m is None:
            raise PatternError(
                f"Cannot read pattern {text!r} near {inner[pos : pos + 20]!r}: arguments are "
                'written name="glob", separated by commas'
            )
        quoted = m.group(2)
        if quoted.startswith("'"):
            quoted = '"' + quoted[1:-1].replace('\\"', '"').replace('"', '\\"') + '"'
        try:
            value = json.loads(quoted)
        except json.JSONDecodeError as exc:
            raise PatternError(
                f"Cannot read pattern {text!r}: bad string {m.group(2)}: {exc.msg}"
            ) from None
        pairs.append((m.group(1), value))
        pos = m.end()
    return tuple(pairs)


def escape_glob(text: str) -> str:
    """`text` as a glob that matches exactly it (`*`, `?` and `[` put in classes)."""
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in text)


_RUNS_ANYTHING = frozenset(
    {
        "rm",
        "sudo",
        "su",
        "doas",
        "sh",
        "bash",
        "zsh",
        "fish",
        "dash",
        "ksh",
        "csh",
        "tcsh",
        "env",
        "xargs",
        "exec",
        "eval",
        "command",
        "builtin",
        "nohup",
        "nice",
        "timeout",
        "time",
        "watch",
        "ssh",
        "find",
    }
)
"""Commands whose arguments are themselves a command (or that delete): suggested exactly."""
_PLAIN_WORD = re.compile(r"[\w/][\w./:@+-]*")
"""A command word without shell syntax, quotes, globs or a leading '-' (an option)."""


def suggest_pattern(tool_name: str, args: Mapping[str, Any]) -> CallPattern:
    """A sensible "always allow calls like this one" pattern for a call.

    A command is never suggested broader than its program and first argument
    (see `command_pattern`); a path its directory (`src/app/x.py` -> `src/app/**`);
    other tools are matched by name.
    """
    for name in ("command", "cmd"):
        command = args.get(name)
        if isinstance(command, str) and command.strip():
            return command_pattern(tool_name, name, command)
    path = args.get("path")
    if isinstance(path, str) and path.strip():
        norm = normalise_path(path)
        parent = posixpath.dirname(norm)
        if parent and not parent.startswith(".."):
            return CallPattern(tool_name, (("path", f"{escape_glob(parent)}/**"),))
        return CallPattern(tool_name, (("path", escape_glob(norm)),))
    return CallPattern(tool_name)


def command_pattern(tool_name: str, arg: str, command: str) -> CallPattern:
    """`git commit -m x` -> `git commit *`; otherwise the exact command.

    The broader form needs a program and a first argument that are plain words
    (no shell syntax, globs, quotes, assignments or options such as `-c`), a
    program that does not run other commands or delete (`sudo`, shells, `rm`,
    `xargs`...), and at least one more argument; and it must cover the call.
    """
    exact = CallPattern(tool_name, ((arg, escape_glob(command)),))
    words = command.split()
    if (
        len(words) < 3
        or not all(_PLAIN_WORD.fullmatch(word) for word in words[:2])
        or posixpath.basename(words[0]) in _RUNS_ANYTHING
    ):
        return exact
    broad = CallPattern(tool_name, ((arg, f"{words[0]} {words[1]} *"),))
    return broad if broad.matches(tool_name, {arg: command}) else exact
