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
- `command` / `cmd`: the command must be one simple command whose every word
  is literal (see `commands`: no expansion, substitution, redirection, operator,
  glob or anything else the shell would read as more than its text, and at most
  `commands.MAX_COMMAND` bytes). The glob is matched against its words in
  canonical form: plain words as they are, any other in single quotes, joined by
  single spaces; `*` (and `**`) matches any run of characters there, across
  words. So `pytest *` allows `pytest -q tests/` and `pytest -k "a or b"`, but
  not `pytest; rm -rf ~`, `pytest > x`, `pytest $HOME` or `pytest $(id)`. A glob
  without wildcards also matches the command's text exactly as written: the only
  way a rule allows a command that is not literal. A glob that writes `|`, `&&`,
  `||` or `;` as words of their own (`git log * | head *`) allows exactly that
  pipeline or list of literal simple commands, stage by stage (see `pipelines`).
  A glob with wildcards never allows a command naming a protected path (`.git`,
  `.workbench`, the rules file: see `protected`); a person or an exact rule must. A
  rule that denies or asks is read the other way round: its glob also matches the
  command's text as written, `*` matching anything, so `rm *` denies `rm -rf $HOME`
  too, and a glob without operators matches any stage of a list (`ls | rm x`).
- anything else: `*` matches any text.

Tool-name, command and text globs are matched without backtracking (see
`globs`), in time bounded by the value's length times the glob's; a path value
longer than `MAX_PATH` characters is never allowed by a path glob (and always
matched by one that denies or asks). Matching is case-sensitive and anchored (the
whole value must match). A non-string value is matched as its JSON text. A
pattern naming an argument the call lacks does not match. A glob that cannot be
read (`[z-a]`) is an error when the pattern is made, not when it is used.

MCP tools are named `server__tool`, so `files__*` names every tool of the MCP
server `files`; `mcp:files` is a short form of it (and `mcp:*` names every MCP
tool). Both work wherever a tool pattern does: rules, flags, breakpoints.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from workbench.permissions.commands import literal_command, quote, runs_others
from workbench.permissions.globs import Glob, GlobError
from workbench.permissions.pipelines import CommandGlob

Style = Literal["path", "command", "text"]

MAX_PATH = 4096
"""Characters: longer path values are beyond every path glob (no file has such a name)."""


class PatternError(ValueError):
    """A pattern (or rule) could not be parsed; the message says where and why."""


def style_of(arg_name: str) -> Style:
    if arg_name.endswith("path"):
        return "path"
    if arg_name in ("command", "cmd"):
        return "command"
    return "text"


def _path_regex(pattern: str) -> str:
    """A path glob as an anchored regular expression, per the module docstring's rules."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
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
    tool opens, see `workbench.tools.workspace`), so for them this changes nothing.
    """
    return posixpath.normpath(value) if value else value


Matcher = Glob | CommandGlob | re.Pattern[str]
Files = Sequence[str]


def _matcher(glob: str, style: Style) -> Matcher:
    """A glob read for its style (see the module docstring).

    Raises:
        PatternError: the glob cannot be read.
    """
    try:
        if style == "path":
            return re.compile(_path_regex(normalise_path(glob)))
        if style == "command":
            return CommandGlob.parse(glob)
        return Glob.parse(glob)
    except (GlobError, re.error) as exc:
        raise PatternError(f"Invalid glob {glob!r}: {exc}") from None


def _value_matches(matcher: Matcher, style: Style, value: Any, widen: bool, files: Files) -> bool:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if isinstance(matcher, re.Pattern):
        if len(text) > MAX_PATH:
            return widen
        return matcher.match(normalise_path(text)) is not None
    if isinstance(matcher, CommandGlob):
        return matcher.allows(text, widen, files)
    return matcher.matches(text)


@dataclass(frozen=True)
class CallPattern:
    """A tool-name glob and argument globs; see the module docstring."""

    tool: str
    args: tuple[tuple[str, str], ...] = ()
    """(argument name, glob) pairs, as written."""

    def __post_init__(self) -> None:
        _ = self._compiled  # a glob that cannot be read fails here, not at its first use

    @cached_property
    def _compiled(self) -> tuple[Glob, tuple[tuple[str, Style, Matcher], ...]]:
        try:
            tool = Glob.parse(self.tool)
        except GlobError as exc:
            raise PatternError(f"Invalid tool name pattern {self.tool!r}: {exc}") from None
        args = tuple(
            (name, style, _matcher(glob, style))
            for name, glob in self.args
            for style in [style_of(name)]
        )
        return tool, args

    @property
    def exact_tool(self) -> str | None:
        """The one tool name this pattern names, or None when its tool is a glob."""
        return self._compiled[0].literal

    def matches(
        self, tool_name: str, args: Mapping[str, Any], *, widen: bool = False, files: Files = ()
    ) -> bool:
        """Whether a call of `tool_name` with (validated) `args` fits this pattern.

        Args:
            widen: read command globs as a rule that denies or asks does (they also
                match the command's text as written; see the module docstring).
            files: protected files besides `.git` and `.workbench` (the rules file),
                which a command glob with wildcards never allows.
        """
        tool, matchers = self._compiled
        if not tool.matches(tool_name):
            return False
        for name, style, matcher in matchers:
            if name not in args or args[name] is None:
                return False
            if not _value_matches(matcher, style, args[name], widen, files):
                return False
        return True

    @property
    def specificity(self) -> tuple[int, int, int]:
        """(argument globs, exact tool name, literal characters): bigger is more specific."""
        literal = sum(len(glob) - sum(glob.count(c) for c in "*?[]") for _, glob in self.args)
        return (len(self.args), int(self.exact_tool is not None), literal)

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


def literal_tool(name: str) -> str:
    """A tool pattern naming exactly the tool `name` (a name like `mcp:x` or `a*b` is
    escaped, so it is never read as a server's tools or a glob).

    Raises:
        PatternError: the name holds characters no pattern can (spaces, quotes...).
    """
    escaped = escape_glob(name)
    escaped = f"[m]{escaped[1:]}" if escaped.startswith("mcp:") else escaped
    return _tool_glob(escaped)


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

    The broader form needs a literal simple command (see `commands`) of at least
    three words whose program and first argument are written plain (no quotes,
    escapes or a leading '-': `r'm' build dist` is suggested exactly), a program
    that does not run other programs or delete (`commands.runs_others`), and it
    must cover the call (not so when the command names a protected path).
    """
    exact = CallPattern(tool_name, ((arg, escape_glob(command)),))
    parsed = literal_command(command)
    if parsed is None or len(parsed.words) < 3 or runs_others(parsed.words):
        return exact
    program, first = parsed.raw[:2]
    if any(not quote(word) == word or word.startswith("-") for word in (program, first)):
        return exact
    broad = CallPattern(tool_name, ((arg, f"{program} {first} *"),))
    return broad if broad.matches(tool_name, {arg: command}) else exact
