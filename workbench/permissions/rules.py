"""Permission rules: allow, ask or deny calls that fit a pattern, and where each rule came from.

Rules come from four places, and every rule remembers its `source` so each
decision can say who made it:

- the defaults (`source="default"`): read-only built-ins allowed, writing and
  running tools ask, any other tool asks;
- the workspace's rules file, `.workbench/rules.toml` (`source` is `file:line`);
- command-line flags `--allow/--ask/--deny PATTERN` (`source` is the flag);
- "always" answers given during the session (`source="session"`, or `file:line`
  when the answer was saved to the rules file).

Precedence (see `RuleSet.match`): the defaults apply only when no other rule
matches. A deny among the other matching rules always wins, however specific an
allow is. Otherwise the most specific wins: more argument patterns first, then
an exact tool name over a tool glob, then more literal (non-wildcard) characters
in the argument patterns. On a full tie the rule added
last wins; rules are added file first (top to bottom), then flags (`--allow`,
then `--ask`, then `--deny`, so on a tie deny beats ask beats allow), then
session answers in the order given.

The rules file (TOML):

    [[rule]]
    tool = "run_command"
    args = { command = "pytest *" }
    action = "allow"

    [[rule]]
    match = 'write_file(path="src/**")'   # the compact form, as on the command line
    action = "allow"
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast, get_args

from workbench.permissions.patterns import CallPattern, PatternError
from workbench.sanitize import UNSAFE

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[str, ...] = get_args(Action)

RULES_FILE = Path(".workbench") / "rules.toml"
"""Where a workspace keeps its rules, relative to the workspace root."""

READ_ONLY = ("read_file", "list_directory", "search_files")
ASKING = ("write_file", "edit_file", "run_command")


class RuleError(PatternError):
    """A rule (or the rules file) is invalid; the message names file and line."""


@dataclass(frozen=True)
class Rule:
    """What to do with calls that fit `pattern`, and where that instruction came from."""

    pattern: CallPattern
    action: Action
    source: str
    """"default", "--allow" / "--ask" / "--deny", "session", or "path/rules.toml:LINE"."""

    @property
    def text(self) -> str:
        """The pattern as written, e.g. `run_command(command="pytest *")`."""
        return str(self.pattern)

    @property
    def is_default(self) -> bool:
        return self.source == "default"

    def __str__(self) -> str:
        return f"{self.action} {self.text} ({self.source})"

    @classmethod
    def parse(cls, text: str, action: Action, source: str) -> Rule:
        """A rule from the compact form (`tool` or `tool(arg="glob")`)."""
        return cls(CallPattern.parse(text), _check_action(action, source), source)


def default_rules() -> list[Rule]:
    """Read-only built-ins allowed; writing, running and unknown tools ask."""
    rules = [Rule(CallPattern("*"), "ask", "default")]
    rules += [Rule(CallPattern(name), "allow", "default") for name in READ_ONLY]
    rules += [Rule(CallPattern(name), "ask", "default") for name in ASKING]
    return rules


class RuleSet:
    """An ordered collection of rules that picks the one deciding a call."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules: list[Rule] = list(rules)

    def __iter__(self) -> Any:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def add(self, rule: Rule) -> None:
        """Add a rule; on a specificity tie it beats every rule added before it."""
        self.rules.append(rule)

    def match(
        self,
        tool_name: str,
        args: Mapping[str, Any],
        *,
        builtin: bool = True,
        files: Sequence[str] = (),
    ) -> Rule | None:
        """The deciding rule for a call (see the module docstring), or None.

        `builtin=False` (a tool from elsewhere that shares a built-in's name): the
        defaults that allow the read-only built-ins do not apply to it. `files`:
        protected files a command glob never allows (see `CallPattern.matches`).
        """
        ranked = [
            ((not rule.is_default, rule.action == "deny", rule.pattern.specificity, index), rule)
            for index, rule in enumerate(self.rules)
            if (builtin or not rule.is_default or rule.action != "allow")
            and rule.pattern.matches(tool_name, args, widen=rule.action != "allow", files=files)
        ]
        return max(ranked, key=lambda pair: pair[0])[1] if ranked else None


def _check_action(action: Any, where: str) -> Action:
    if action not in ACTIONS:
        raise RuleError(f"{where}: action must be one of allow, ask, deny (got {action!r})")
    return cast(Action, action)  # one of ACTIONS, checked above


def rules_from_flags(
    allow: Sequence[str] = (), ask: Sequence[str] = (), deny: Sequence[str] = ()
) -> list[Rule]:
    """Rules from `--allow`, `--ask` and `--deny` flags (compact patterns)."""
    out: list[Rule] = []
    for action, texts in (("allow", allow), ("ask", ask), ("deny", deny)):
        for text in texts:
            try:
                out.append(Rule.parse(text, action, f"--{action}"))  # type: ignore[arg-type]
            except PatternError as exc:
                raise RuleError(f"--{action} {text!r}: {exc}") from None
    return out


# -- the rules file ------------------------------------------------------------------

_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*rule[ \t]*\]\]", re.M)
_RULE_KEY = re.compile(r"^[ \t]*(?:\[[ \t]*rule[ \t]*\]|rule[ \t]*=)", re.M)
_KNOWN_KEYS = {"tool", "args", "match", "action", "comment"}


def load_rules_file(path: Path, display: str | None = None) -> list[Rule]:
    """The rules in a TOML rules file (none if it does not exist).

    Args:
        path: the file.
        display: how sources name the file (default: the path as given).

    Raises:
        RuleError: the file is not UTF-8 or not valid TOML, or a rule is
            malformed; the message names the file and the line.
    """
    name = display or str(path)
    if not path.exists():
        return []
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RuleError(f"{name}:{line}: the rules file is not UTF-8 text") from None
    return rules_from_text(text, name)


def rules_from_text(text: str, name: str) -> list[Rule]:
    """The rules in the text of a rules file called `name` (see `load_rules_file`)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{name}: {exc}") from None
    for unknown in sorted(set(data) - {"rule"}):
        hint = " (did you mean [[rule]]?)" if unknown.casefold().rstrip("s") == "rule" else ""
        raise RuleError(
            f"{name}:{_key_line(text, unknown)}: unknown table or key {unknown!r}{hint}; "
            "a rules file holds only [[rule]] tables"
        )
    entries = data.get("rule", [])
    key = _RULE_KEY.search(text)
    key_line = text.count("\n", 0, key.start()) + 1 if key else 1
    if not isinstance(entries, list):
        raise RuleError(f"{name}:{key_line}: 'rule' must be an array of tables ([[rule]])")
    lines = [text.count("\n", 0, m.start()) + 1 for m in _HEADER.finditer(text)]
    rules = []
    for i, entry in enumerate(entries):
        # `[[rule]]` headers give each rule its own line; an inline array shares one
        where = (
            f"{name}:{lines[i]}"
            if len(lines) == len(entries)
            else (f"{name}:{key_line} (rule {i + 1})")
        )
        rules.append(_rule_from_table(entry, where))
    return rules


def _key_line(text: str, key: str) -> int:
    """The line where a top-level `key` is first written (a header or `key =`), or 1."""
    name = "(?:" + "|".join(re.escape(k) for k in (key, f'"{key}"', f"'{key}'")) + ")"
    found = re.search(rf"^[ \t]*(?:\[\[?[ \t]*{name}[ \t]*[\].]|{name}[ \t]*[.=])", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _rule_from_table(entry: Any, where: str) -> Rule:
    if not isinstance(entry, dict):
        raise RuleError(f"{where}: each rule must be a table ([[rule]]), got {entry!r}")
    unknown = set(entry) - _KNOWN_KEYS
    if unknown:
        raise RuleError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("tool", "match", "comment"):
        if key in entry and not isinstance(entry[key], str):
            raise RuleError(f"{where}: {key} must be a string, got {entry[key]!r}")
    action = _check_action(entry.get("action"), where)
    try:
        if "match" in entry:
            if "tool" in entry or "args" in entry:
                raise RuleError(f"{where}: give either match or tool/args, not both")
            pattern = CallPattern.parse(entry["match"])
        elif "tool" in entry:
            args = entry.get("args", {})
            if not isinstance(args, dict):
                raise RuleError(f"{where}: args must be a table of argument patterns")
            pattern = CallPattern.of(entry["tool"], args)
        else:
            raise RuleError(f"{where}: a rule needs tool (and optional args) or match")
    except RuleError:
        raise
    except PatternError as exc:
        raise RuleError(f"{where}: {exc}") from None
    return Rule(pattern, action, where)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_str(key)


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_TOML_ESCAPED = re.compile(r'["\\\n\t]|' + UNSAFE.pattern)


def _toml_escape(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        raise RuleError(
            f"the pattern holds U+{ord(char):04X} (a lone surrogate), which a rules file "
            "cannot store; allow it for this session instead"
        )
    return _TOML_ESCAPES.get(char) or f"\\u{ord(char):04X}"


def _toml_str(value: str) -> str:
    """`value` as a TOML basic string, every control, bidi and zero-width character escaped
    (TOML refuses raw controls, DEL included; the others would hide in the file).

    Raises:
        RuleError: `value` holds a lone surrogate, which no TOML string can hold.
    """
    return '"' + _TOML_ESCAPED.sub(_toml_escape, value) + '"'


def append_rule(
    path: Path, pattern: CallPattern, action: Action, display: str | None = None
) -> Rule:
    """Append a rule to the rules file (creating it) and return it with its `file:line`.

    The user's comments and layout (and the line numbers other rules were loaded
    with) stay as they are. The new text is read back before it is written, and
    written to a temporary file renamed over the old one, so the file on disk is
    always one that loads: the old one, or the old one plus this rule.

    Raises:
        RuleError: the rule cannot be stored (a lone surrogate) or would not read back.
        OSError: the file cannot be read or written.
    """
    name = display or str(path)
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    blank = "\n" if existing else ""
    block = [f"{blank}# Added from a workbench session ({stamp})", "[[rule]]"]
    block.append(f"tool = {_toml_str(pattern.tool)}")
    if pattern.args:
        inner = ", ".join(f"{_toml_key(k)} = {_toml_str(v)}" for k, v in pattern.args)
        block.append(f"args = {{ {inner} }}")
    block.append(f"action = {_toml_str(action)}")
    header_line = (existing + prefix).count("\n") + 3 if existing else 2
    text = existing + prefix + "\n".join(block) + "\n"
    try:
        saved = rules_from_text(text, name)[-1]
    except (RuleError, IndexError) as exc:
        raise RuleError(f"{name}: the rule would not read back ({exc})") from None
    if saved.pattern != pattern or saved.action != action:
        raise RuleError(f"{name}: the rule would read back as {saved.text}, not as {pattern}")
    _replace_file(path, text)
    return Rule(pattern, action, f"{name}:{header_line}")


def _replace_file(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_rules(
    workspace: Path | None = None,
    *,
    rules_file: Path | None = None,
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    defaults: bool = True,
) -> RuleSet:
    """Defaults, then the rules file, then flags, as one `RuleSet`.

    Args:
        workspace: the workspace root; its `.workbench/rules.toml` is read.
        rules_file: a rules file to read instead.
        allow, ask, deny: compact patterns from the command line.
        defaults: include the default rules.
    """
    rules = default_rules() if defaults else []
    file = rules_file or (workspace / RULES_FILE if workspace is not None else None)
    if file is not None:
        rules += load_rules_file(file, display_path(file, workspace))
    rules += rules_from_flags(allow, ask, deny)
    return RuleSet(rules)


def display_path(file: Path, workspace: Path | None) -> str:
    """The rules file as sources show it: relative to the workspace when inside it."""
    if workspace is not None:
        try:
            return file.resolve().relative_to(workspace.resolve()).as_posix()
        except ValueError:
            pass
    return str(file)
