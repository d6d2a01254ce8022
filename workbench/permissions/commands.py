"""Shell commands as rules see them: one simple command of literal words, or nothing.

A command glob (`run_command(command="git log *")`) may only allow a command whose
meaning is its text: bash's parse (tree-sitter's bash grammar) must show one simple
command, nothing else, and every word of it must be literal after quote removal.
`literal_command` gives those words, or None for anything else:

- more than one command (`;`, `&&`, `||`, `|`, `&`, a newline), a redirection or
  here-document, a subshell, group, compound command or function definition, an
  assignment prefix (`X=1 cmd`), a comment, a reserved word as the program, or
  any parse error;
- any word holding `$` (parameter, arithmetic and prompt expansion, `$'...'`),
  a backquote, `<(`/`>(`, `~`, `{`/`}` (brace expansion), `*`/`?`/`[` (pathname
  expansion), `!`, `#`, `(`/`)`, or a character not printable, unless quoted;
- a command longer than `MAX_COMMAND` bytes.

A word is literal when it is made only of plain characters (letters, digits and
`_./:@%+,=-`), backslash-escaped characters, single-quoted text, and
double-quoted text without `$`, a backquote or a backslash. The words must be
the same ones the parser found, so a spelling the two read differently is not
literal either.

The words are then written back in one canonical form (`canonical`): each plain
word as it is, any other in single quotes, joined by single spaces. That form
re-reads as the same words, so `'git log' x` (one program named "git log") is
never `git log x`, and it is what command globs match.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

MAX_COMMAND = 8192
"""Bytes: a longer command is never literal (so never matched by a glob)."""

_PLAIN = re.compile(r"[A-Za-z0-9_./:@%+,=-]+")
"""A word that needs no quotes: bash reads every one of these characters as itself."""
_BLANKS = re.compile(r"[ \t]*")
_RESERVED = frozenset(
    "if then else elif fi case esac for select while until do done in function time "
    "coproc { } ! [[ ]]".split()
)
_WORD_NODES = frozenset(
    {"word", "number", "raw_string", "string", "string_content", "concatenation"}
)
"""The only node types a literal word's parse may hold."""

_PARSER = Parser(Language(tree_sitter_bash.language()))


@dataclass(frozen=True)
class SimpleCommand:
    """A simple command whose every word is literal: what bash will run, word by word."""

    words: tuple[str, ...]
    """The words after quote removal (the program first)."""
    raw: tuple[str, ...]
    """The words as written in the command."""

    @property
    def canonical(self) -> str:
        """The words re-quoted one way and joined by single spaces (see the module doc)."""
        return " ".join(quote(word) for word in self.words)


def quote(word: str) -> str:
    """`word` as the canonical form writes it: plain, or in single quotes."""
    if _PLAIN.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _unquote(raw: str) -> str | None:
    """The literal value of one word as written, or None when it is not literal."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            if i + 1 >= n or raw[i + 1] == "\n":
                return None
            out.append(raw[i + 1])
            i += 2
        elif c == "'":
            end = raw.find("'", i + 1)
            if end < 0:
                return None
            out.append(raw[i + 1 : end])
            i = end + 1
        elif c == '"':
            end = raw.find('"', i + 1)
            inner = raw[i + 1 : end]
            if end < 0 or any(ch in inner for ch in "$`\\"):
                return None
            out.append(inner)
            i = end + 1
        elif _PLAIN.fullmatch(c):
            out.append(c)
            i += 1
        else:
            return None
    return "".join(out)


def _only_word_nodes(node: Node) -> bool:
    return node.type in _WORD_NODES and all(
        _only_word_nodes(child) for child in node.named_children
    )


def _literal_command(command: str) -> SimpleCommand | None:
    """The literal simple command `command` is, or None (see the module docstring)."""
    if _has_control(command):
        return None
    data = command.encode()
    if len(data) > MAX_COMMAND:
        return None
    root = _PARSER.parse(data).root_node
    if root.has_error or root.child_count != 1 or root.children[0].type != "command":
        return None
    node = root.children[0]
    if not _BLANKS.fullmatch(command[: _at(data, node.start_byte)]):
        return None
    if not _BLANKS.fullmatch(command[_at(data, node.end_byte) :]):
        return None
    raw: list[str] = []
    pos = node.start_byte
    for child in node.children:
        if child.type == "command_name":
            if child.child_count != 1:
                return None
            child = child.children[0]
        if not _only_word_nodes(child) or child.start_byte < pos:
            return None
        gap = data[pos : child.start_byte]
        text = data[child.start_byte : child.end_byte].decode()
        if gap.strip(b" \t"):
            return None
        if raw and not gap:  # no blank between: bash reads one word (`''\$`)
            raw[-1] += text
        else:
            raw.append(text)
        pos = child.end_byte
    if node.children[0].type != "command_name":
        return None
    words = tuple(_unquote(word) for word in raw)
    if any(word is None for word in words) or _split(command) != raw:
        return None
    if words[0] in _RESERVED or "=" in raw[0]:
        return None
    return SimpleCommand(words, tuple(raw))  # type: ignore[arg-type]


literal_command = lru_cache(maxsize=512)(_literal_command)
"""`_literal_command`, cached (a gate judges the same command more than once)."""


def _has_control(command: str) -> bool:
    """Whether `command` holds a character other than a printable one, a space or a tab."""
    return any(not ch.isprintable() and ch not in " \t" for ch in command)


def _at(data: bytes, byte: int) -> int:
    """The character index of a byte offset into `data`."""
    return len(data[:byte].decode())


def _split(command: str) -> list[str]:
    """The command's words by blanks outside quotes: a second reading to agree with."""
    words: list[str] = []
    current: list[str] = []
    quote_char = ""
    escaped = False
    for ch in command:
        if escaped:
            current.append(ch)
            escaped = False
        elif quote_char:
            current.append(ch)
            quote_char = "" if ch == quote_char else quote_char
        elif ch in " \t":
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
            escaped = ch == "\\"
            quote_char = ch if ch in "'\"" else ""
    if current:
        words.append("".join(current))
    return words


def names_protected(command: SimpleCommand, files: Sequence[str] = ()) -> str | None:
    """The first word of `command` naming a protected path (see `protected`), or None.

    Every word is read as a path, and so is each part after a `=`, `:`, `,` or `@`
    (`--git-dir=.git`, `-Wl,-o,.git/x`, `@.git/config`); a path is protected when
    any tail of it is (`a/.git/x`, `/abs/ws/.workbench`). An option's value may be
    glued to it (`-o.git/x`, `-C.workbench`, `-xfworkbench.toml`), so in a part that
    starts with `-` the text from any place in its first segment where a protected
    name begins is read as a path too. This may ask about a path that is not
    protected but never misses one that is. The work is linear in the command's
    length (times the number of `files`).
    """
    from workbench.permissions.protected import PROTECTED_DIRS, PROTECTED_NAMES, as_path

    own = [as_path(file).casefold().split("/") for file in files]
    needles = {*PROTECTED_DIRS, *PROTECTED_NAMES, *(parts[0] for parts in own if parts[0])}
    for word in command.words:
        for part in [*re.split(r"[=:,@]", word), word]:
            normal = posixpath.normpath(part).split("/")
            folded = [p.casefold() for p in normal if p not in ("", ".")]
            if _any_tail_protected(folded, own):
                return word
            if not part.startswith("-") or not folded:
                continue
            first, rest = folded[0], folded[1:]
            for at in _starts(first, needles):
                if _protected_from(first[at:], rest, own):
                    return word
    return None


def _any_tail_protected(folded: list[str], own: list[list[str]]) -> bool:
    """Whether any tail of a path (its casefolded segments) is protected: one of its
    segments is a protected directory, its last is a protected name, or one of the
    run's own files (`own`, as segments) starts at one of its segments."""
    from workbench.permissions.protected import PROTECTED_DIRS, PROTECTED_NAMES

    if any(part.strip() in PROTECTED_DIRS for part in folded):
        return True
    if folded and folded[-1].strip() in PROTECTED_NAMES:
        return True
    return any(
        folded[at : at + len(parts)] == parts
        for parts in own
        for at in range(len(folded) - len(parts) + 1)
    )


def _protected_from(first: str, rest: list[str], own: list[list[str]]) -> bool:
    """Whether the path whose segments are `first` and `rest` is protected from its
    start (its other tails are those of the path `first` was cut from)."""
    from workbench.permissions.protected import PROTECTED_DIRS, PROTECTED_NAMES

    name = first.strip()
    if name in PROTECTED_DIRS or (not rest and name in PROTECTED_NAMES):
        return True
    return any([first, *rest[: len(parts) - 1]] == parts for parts in own)


def _starts(text: str, needles: set[str]) -> set[int]:
    """Each index > 0 of `text` where one of `needles` begins."""
    found = set()
    for needle in needles:
        at = text.find(needle, 1)
        while at >= 0:
            found.add(at)
            at = text.find(needle, at + 1)
    return found


_RUNS_OTHERS = frozenset(
    """
    rm sudo su doas pkexec runuser sh bash zsh fish dash ksh csh tcsh busybox toybox env xargs
    parallel exec eval command builtin nohup nice ionice chrt taskset timeout time watch entr
    stdbuf setsid chroot unshare nsenter flock strace ltrace gdb valgrind script expect tmux
    screen ssh find npx pnpx bunx uvx pipx fakeroot firejail systemd-run dbus-run-session
    nix-shell
    """.split()
)
"""Programs whose arguments are themselves a command (or that delete)."""
_RUNS_OTHERS_WITH = {
    "uv": {"run", "tool"},
    "npm": {"exec", "x"},
    "pnpm": {"exec", "dlx"},
    "yarn": {"exec", "dlx"},
    "bun": {"x", "run"},
    "poetry": {"run"},
    "pipenv": {"run"},
    "pdm": {"run"},
    "hatch": {"run"},
    "conda": {"run"},
    "mamba": {"run"},
    "pixi": {"run", "exec"},
    "git": {"submodule", "bisect", "rebase", "filter-branch", "difftool", "mergetool"},
    "docker": {"run", "exec"},
    "podman": {"run", "exec"},
    "kubectl": {"exec", "run", "debug"},
    "nix": {"run", "shell", "develop"},
}
"""Programs whose arguments are a command after this first argument (`uv run X`)."""


def runs_others(words: Sequence[str]) -> bool:
    """Whether a command's program (with its first argument) runs other programs or
    deletes: such a command is only ever suggested exactly, never as `PROG ARG *`."""
    program = posixpath.basename(words[0])
    return program in _RUNS_OTHERS or any(
        first in _RUNS_OTHERS_WITH.get(program, ()) for first in words[1:2]
    )
