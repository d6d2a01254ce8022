"""Pipelines and lists that a command rule names explicitly.

A command glob allows one simple command (see `commands`), unless the glob itself
names a pipeline or list: `git log * | head *` allows a two-stage pipeline whose
first stage `git log *` matches and whose second `head *` matches, and nothing else
(not `git log x`, not `git log x | head y | sh`, not `git log x && head y`). The
operators a glob may name are `|`, `&&`, `||` and `;`, each written as a word of
its own (spaces on both sides, outside quotes); `|&`, `&`, newlines, redirections
and everything else that makes a stage more than a literal simple command stay
outside every glob.

A command is such a list when bash's parse (tree-sitter's bash grammar) shows only
simple commands joined by those operators, the text between two stages is the
operator and blanks, and each stage's own text is a literal simple command
(`commands.literal_command`, which parses it again on its own). The stages and
operators are then matched one to one, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from workbench.permissions.commands import (
    _PARSER,
    MAX_COMMAND,
    SimpleCommand,
    _at,
    _has_control,
    literal_command,
    names_protected,
)
from workbench.permissions.globs import Glob

OPERATORS = frozenset({"|", "&&", "||", ";"})
"""What may join the stages of a list a rule names."""

_JOINING = frozenset({"program", "list", "pipeline"})
"""The parse nodes that only join commands with operators."""


@dataclass(frozen=True)
class CommandList:
    """Literal simple commands joined by operators: `stages[i] operators[i] stages[i+1]`."""

    stages: tuple[SimpleCommand, ...]
    operators: tuple[str, ...]


def _literal_list(command: str) -> CommandList | None:
    """The stages and operators of `command`, or None when it is anything but literal
    simple commands joined by `OPERATORS` (see the module docstring)."""
    if _has_control(command):
        return None
    data = command.encode()
    if len(data) > MAX_COMMAND:
        return None
    root = _PARSER.parse(data).root_node
    nodes: list[Node] = []
    if root.has_error or not _collect(root, nodes) or not nodes:
        return None
    stages: list[SimpleCommand] = []
    operators: list[str] = []
    pos = 0
    for node in nodes:
        start, end = _at(data, node.start_byte), _at(data, node.end_byte)
        gap = command[pos:start].strip(" \t")
        if stages and gap not in OPERATORS or not stages and gap:
            return None
        stage = literal_command(command[start:end])
        if stage is None:
            return None
        if stages:
            operators.append(gap)
        stages.append(stage)
        pos = end
    if command[pos:].strip(" \t"):
        return None
    return CommandList(tuple(stages), tuple(operators))


literal_list = lru_cache(maxsize=512)(_literal_list)
"""`_literal_list`, cached."""


def _collect(node: Node, out: list[Node]) -> bool:
    """Append the `command` nodes under `node` in order; False for anything but
    commands joined by operators."""
    if node.type == "command":
        out.append(node)
        return True
    if node.type not in _JOINING:
        return False
    for child in node.children:
        if child.is_named:
            if not _collect(child, out):
                return False
        elif child.type not in OPERATORS:
            return False
    return True


def split_glob(glob: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stage globs, operators) of a command glob: split at each operator written as
    a word of its own outside single quotes (one stage and no operator for a glob
    that names none)."""
    stages: list[str] = []
    operators: list[str] = []
    start = 0
    quoted = False
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "'":
            quoted = not quoted
        elif c == "\\" and not quoted:
            i += 1
        elif c == " " and not quoted:
            end = glob.find(" ", i + 1)
            word = glob[i + 1 : end]
            if end > 0 and word in OPERATORS:
                stages.append(glob[start:i])
                operators.append(word)
                start = end + 1
                i = end
                continue
        i += 1
    stages.append(glob[start:])
    return tuple(stages), tuple(operators)


@dataclass(frozen=True)
class CommandGlob:
    """A command glob as rules read it: one glob per stage, with the operators between.

    `allows` is the judgement of `patterns` (see its module docstring): a glob with
    wildcards matches literal stages only, and never a command naming a protected
    path; read for a rule that denies or asks (`widen`), it also matches the text as
    written, and a one-stage glob matches any stage of a list.
    """

    text: str
    whole: Glob
    """The glob read as plain text."""
    stages: tuple[Glob, ...]
    """One glob per stage (one for a glob that names no operator)."""
    operators: tuple[str, ...]
    literal: str | None
    """The one text the glob names when it has no wildcard."""

    @classmethod
    def parse(cls, text: str) -> CommandGlob:
        """Read a command glob.

        Raises:
            GlobError: a glob (of the whole or of a stage) that cannot be read.
        """
        whole = Glob.parse(text)
        stages, operators = split_glob(text)
        parsed = tuple(Glob.parse(stage) for stage in stages)
        return cls(text, whole, parsed, operators, whole.literal)

    def matches(self, text: str) -> bool:
        """Whether the glob read as plain text matches all of `text`."""
        return self.whole.matches(text)

    def allows(self, text: str, widen: bool, files: Sequence[str]) -> bool:
        """Whether the command `text` fits this glob (see the class docstring)."""
        if self.literal == text or (widen and self.matches(text)):
            return True
        listed = literal_list(text)
        if listed is None:
            return False
        globs, operators = self.stages, self.operators
        if operators:
            fits = listed.operators == operators and all(
                glob.matches(stage.canonical)
                for glob, stage in zip(globs, listed.stages, strict=True)
            )
        elif widen:
            return any(globs[0].matches(stage.canonical) for stage in listed.stages)
        else:
            fits = len(listed.stages) == 1 and globs[0].matches(listed.stages[0].canonical)
        if not fits:
            return False
        named = (names_protected(stage, files) for stage in listed.stages)
        return widen or self.literal is not None or all(name is None for name in named)
