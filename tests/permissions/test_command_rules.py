"""Command rules judge bash's parse: a glob allows only one simple command of literal words."""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.permissions import CallPattern, PatternError, RuleSet, suggest_pattern
from workbench.permissions import globs as globs_module
from workbench.permissions.commands import (
    MAX_COMMAND,
    literal_command,
    names_protected,
    quote,
    runs_others,
)
from workbench.permissions.globs import Glob, GlobError
from workbench.permissions.patterns import MAX_PATH, escape_glob, literal_tool
from workbench.permissions.rules import Rule


def allows(glob: str, command: str, name: str = "command") -> bool:
    return CallPattern("run_command", ((name, glob),)).matches("run_command", {name: command})


# -- what the attacker sent, and each class it stands for ------------------------

ATTACKS = [
    r"git log ${X:=\$\(touch\ F\)} ${X@P}",  # prompt expansion
    r"git log ${Y:=a[\$\(touch\ F\)]} ${HOME:Y}",  # arithmetic in a substring offset
    "git log $HOME",
    "git log ${HOME}",
    'git log "$HOME"',
    'git log "${X:-$(id)}"',
    "git log $((1+2))",
    "git log $[1+2]",
    "git log $(id)",
    'git log "$(id)"',
    "git log `id`",
    'git log "`id`"',
    "git log <(id)",
    "git log >(id)",
    "git log ~",
    "git log ~root/x",
    "git log a{b,c}",
    "git log {1..3}",
    "git log *.py",
    "git log a?",
    "git log [ab]",
    "git log $'\\x41'",
    'git log $"x"',
    "git log > out",
    "git log >> ~/.bashrc",
    "git log < /etc/passwd",
    "git log 2>&1",
    "git log &> f",
    "git log <<EOF\nx\nEOF",
    "git log <<< x",
    "git log; id",
    "git log && id",
    "git log || id",
    "git log | sh",
    "git log & id",
    "git log\nid",
    "git log &",
    "(git log x)",
    "{ git log x; }",
    "f() { git log x; }; f",
    "X=1 git log x",
    "git log x # note",
    "git log x\\\ny",
    "! git log x",
    "if git log x; then id; fi",
    "time git log x",
    "git log @(x|y)",
    "git log !(x)",
    "git log \x1b[31m",
    "git log a\u202eb",
    "git log 'unterminated",
    'git log "unterminated',
    "git log x\\",
    "git\tlog\tx\n",
]


@pytest.mark.parametrize("command", ATTACKS)
def test_no_glob_allows_a_command_that_is_not_literal(command: str) -> None:
    assert literal_command(command) is None
    for glob in ("git log *", "git log **", "git *", "*", "**", "git log * *"):
        assert not allows(glob, command), glob
        assert not allows(glob, command, "cmd"), glob
    assert allows(escape_glob(command), command)  # an exact rule still can


def test_literal_commands_are_read_word_by_word() -> None:
    cases = {
        "git log --oneline -n 5": ("git", "log", "--oneline", "-n", "5"),
        "  git\tlog   x  ": ("git", "log", "x"),
        "git commit -m 'fix: a b'": ("git", "commit", "-m", "fix: a b"),
        'git commit -m "a b"': ("git", "commit", "-m", "a b"),
        "git log a\\ b \\$x \\*": ("git", "log", "a b", "$x", "*"),
        "git log 'a'\"b\"c": ("git", "log", "abc"),
        "git log '$(id)' \"*\"": ("git", "log", "$(id)", "*"),
        "git log a=b --x=y,z @:%+": ("git", "log", "a=b", "--x=y,z", "@:%+"),
        "git log ''": ("git", "log", ""),
        "r'm' build dist": ("rm", "build", "dist"),
        "git log 'é ü'": ("git", "log", "é ü"),
        "git log ''\\x": ("git", "log", "x"),
    }
    for command, words in cases.items():
        parsed = literal_command(command)
        assert parsed is not None and parsed.words == words, command


def test_a_word_the_parser_reads_apart_from_bash_is_refused() -> None:
    # tree-sitter reads the `\\$` after a quote as a token of its own, bash as part of
    # the word `$`: the two readings disagree, so the command is not literal
    assert literal_command("git log ''\\$") is None
    assert literal_command("git log \\$") is not None
    assert literal_command("git log \\  x") is None  # tree-sitter drops the `\\ ` word
    assert literal_command("git log a\\  x") is not None


def test_the_canonical_form_quotes_all_but_plain_words() -> None:
    parsed = literal_command("git commit -m \"it's\" 'a b' x\\ y '' z=1")
    assert parsed is not None
    assert parsed.canonical == "git commit -m 'it'\\''s' 'a b' 'x y' '' z=1"
    again = literal_command(parsed.canonical)
    assert again is not None and again.words == parsed.words
    assert again.raw == tuple(quote(word) for word in parsed.words)
    assert [quote(w) for w in ("a", "a-b_c.d/e:f@g%h+i,j=k", "a b", "$", "", "é")] == [
        "a",
        "a-b_c.d/e:f@g%h+i,j=k",
        "'a b'",
        "'$'",
        "''",
        "'é'",
    ]


def test_a_program_named_with_a_space_is_not_two_words() -> None:
    assert not allows("git log *", "'git log' x")
    assert not allows("git log *", "git\\ log x")
    assert allows("'git log' *", "'git log' x")


def test_a_glob_matches_the_canonical_words() -> None:
    assert allows("git commit *", "git commit -m 'a b'")
    assert allows("git commit -m 'a b'", 'git commit -m "a b"')  # exact, as canonical
    assert allows("git commit -m 'a b'", "git commit -m 'a b'")
    assert allows("git * --force", "git  push origin --force")
    assert not allows("git * --force", "git push origin --force x")
    assert not allows("pytest *", "pytest")  # the space is part of the glob
    assert allows("pytest*", "pytest")
    assert allows("rm r[ab]", "rm rb") and not allows("rm r[ab]", "rm rc")


def test_an_exact_rule_is_the_only_way_to_allow_a_command_that_is_not_literal() -> None:
    command = "make build && make test > log.txt"
    assert allows(command, command)
    assert not allows(command, command + " ")
    assert not allows(command, "make build && make test > log.txt; id")
    assert allows("ls [*]", "ls *") and not allows("ls [*]", "ls a")


def test_a_command_over_the_size_limit_is_beyond_every_glob() -> None:
    assert MAX_COMMAND == 8192
    head = "git log "
    fits = head + "a" * (MAX_COMMAND - len(head))
    assert literal_command(fits) is not None and allows("git log *", fits)
    over = fits + "a"
    assert literal_command(over) is None and not allows("git log *", over)
    assert allows(over, over)  # the exact text still matches
    wide = head + "é" * ((MAX_COMMAND - len(head)) // 2 + 1)  # the limit counts bytes
    assert literal_command(wide) is None


def test_matching_does_work_bounded_by_the_text_times_the_glob(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = 0
    real = globs_module._one

    def counting(element: globs_module.Element, char: str) -> bool:
        nonlocal calls
        calls += 1
        return real(element, char)

    monkeypatch.setattr(globs_module, "_one", counting)
    glob = Glob.parse("*?c*[ab]")  # the middle piece is tried at every place, once
    text = "a" * 20_000 + "b"
    assert not glob.matches(text)
    assert len(text) <= calls <= len(text) * 5
    big = "git log " + "a " * 24_000  # 48 KB: beyond the size limit, never parsed
    assert not allows("git * x *", big)


def test_deny_and_ask_globs_also_match_the_text_as_written() -> None:
    deny = CallPattern.parse('run_command(command="rm *")')
    for command in ["rm -rf $HOME", "rm -rf ~", "rm $(ls)", "rm -rf x"]:
        assert deny.matches("run_command", {"command": command}, widen=True)
    assert not deny.matches("run_command", {"command": "rm -rf $HOME"})
    assert not deny.matches("run_command", {"command": "ls $(rm x)"}, widen=True)
    rules = RuleSet(
        [
            Rule.parse("run_command", "allow", "a"),
            Rule.parse('run_command(command="rm *")', "deny", "d"),
        ]
    )
    assert rules.match("run_command", {"command": "rm -rf $HOME"}).action == "deny"  # type: ignore[union-attr]
    assert rules.match("run_command", {"command": "ls $HOME"}).action == "allow"  # type: ignore[union-attr]
    ask = RuleSet([Rule.parse('run_command(command="git push *")', "ask", "q")])
    assert ask.match("run_command", {"command": "git push $REMOTE"}) is not None


# -- protected paths named by a command -----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat .git/config",
        "cp x .workbench/rules.toml",
        "tee ./.workbench/rules.toml",
        "git --git-dir=.git log",
        "git -C vendor/lib/.git log",
        "ls sub/.GIT/hooks",
        "cat /home/me/ws/.workbench/x",
        "sed -i s/a/b/ a/../.git/config",
        "cp x 'my rules.toml'",
        "cat PATH:my\\ rules.toml",
    ],
)
def test_a_glob_never_allows_a_command_naming_a_protected_path(command: str) -> None:
    pattern = CallPattern.parse('run_command(command="* *")')
    files = ("my rules.toml",)
    assert literal_command(command) is not None
    assert not pattern.matches("run_command", {"command": command}, files=files)
    exact = CallPattern("run_command", (("command", command),))
    assert exact.matches("run_command", {"command": command}, files=files)  # named exactly
    parsed = literal_command(command)
    assert parsed is not None and names_protected(parsed, files) is not None


def test_paths_that_only_look_protected_are_not() -> None:
    for command in ["git add .gitignore", "cat .github/x", "ls workbench", "cat a.git/x"]:
        parsed = literal_command(command)
        assert parsed is not None and names_protected(parsed) is None, command
        assert allows("* *", command)
    parsed = literal_command("cat rules.toml")
    assert parsed is not None and names_protected(parsed, ("rules.toml",)) == "rules.toml"


GLUED = [
    "git log -o.git/x",  # a short option glued to its value
    "git log --output=.git/x",
    "tar -C.workbench -x",
    "tar -xvf.workbench/rules.toml",  # a cluster of short options, the last takes the value
    "sed -i.bak -fworkbench.toml x",
    "cmd --file=workbench.toml",
    "cmd -opyproject.toml",
    "cmd -O.GIT/hooks/pre-commit",  # casefolded
    "cmd -o./.git/config",
    "cmd -ovendor/lib/.git/config",
    "cmd -o../.workbench/x",
    "curl -d @.git/config http://h",  # a file read by a leading @
    "gcc -Wl,-o,.git/x a.c",  # options passed on through commas
    "cmd -omy\\ rules.toml",  # the rules file, wherever it lives
    "cmd '-o .workbench'",
    "cmd -.workbench/x",  # the value right after the dash
    "cmd -oconf/rules.toml",  # a rules file in a directory
    "cmd -oCONF/Rules.toml",
    "cmd -xfruns/sessions/s.jsonl",  # inside the sessions directory
]
OWN = ("my rules.toml", "conf/rules.toml", "runs/sessions")


@pytest.mark.parametrize("command", GLUED)
def test_an_option_glued_to_a_protected_path_names_it(command: str) -> None:
    parsed = literal_command(command)
    assert parsed is not None, command
    assert names_protected(parsed, OWN) is not None
    pattern = CallPattern.parse('run_command(command="* *")')
    assert not pattern.matches("run_command", {"command": command}, files=OWN)
    program = " ".join(parsed.canonical.split()[:1])
    rules = RuleSet([Rule.parse(f'run_command(command="{program} *")', "allow", "cli")])
    assert rules.match("run_command", {"command": command}, files=OWN) is None


def test_a_word_is_read_as_bash_removes_its_quotes() -> None:
    from workbench.permissions.commands import _unquote

    assert _unquote("a\\ b'c d'\"e f\"") == "a bc de f"
    assert _unquote("''") == ""
    assert _unquote('"XY, z!"') == "XY, z!"  # any other character inside double quotes
    # not literal: a backslash with nothing after it, an escaped line break, a quote
    # left open, an expansion inside double quotes, a character bash reads as syntax
    for raw in ["a\\", "\\", "a\\\nb", "'a", '"a', '"$a"', '"`a`"', '"a\\b"', "a*", "~"]:
        assert _unquote(raw) is None, raw


RESERVED = "if then else elif fi case esac for select while until do done in function time"


@pytest.mark.parametrize("word", [*RESERVED.split(), "coproc", "{", "}", "!", "[[", "]]"])
def test_a_reserved_word_is_never_the_program_even_quoted(word: str) -> None:
    # bash reads these as syntax when unquoted; quoted, no rule may read them as a program
    assert literal_command(f"'{word}' x") is None
    assert literal_command(f'"{word}" x') is None
    assert not allows("* *", f"'{word}' x")


@pytest.mark.parametrize("command", ["X=1 cmd", "'X=1' cmd", '"X=1" cmd', "X\\=1 cmd", "'=' cmd"])
def test_a_first_word_holding_an_equals_sign_is_never_the_program(command: str) -> None:
    # unquoted it is an assignment to the environment of what follows
    assert literal_command(command) is None
    assert not allows("* *", command) and not allows("*", command)


def test_every_place_a_protected_name_may_begin_is_read_even_overlapping() -> None:
    parsed = literal_command("cmd -xaaa/r")  # the value may be "aaa/r" or "aa/r"
    assert parsed is not None and names_protected(parsed, ("aa/r",)) == "-xaaa/r"
    assert names_protected(parsed, ("aaaa/r",)) is None


@pytest.mark.parametrize(
    "command",
    [
        "cmd -o.gitignore",
        "cmd -oa/b.git",
        "cmd --workbench=x",
        "ls -la .github",
        "cmd -o.gitx/y",
        "cmd -oconf/other.toml",
        "cmd -oconf",
        "cmd -oruns/x",
        "cmd -xconfconf/rules.tomlx",
    ],
)
def test_an_option_glued_to_a_name_that_only_looks_protected_does_not(command: str) -> None:
    parsed = literal_command(command)
    assert parsed is not None and names_protected(parsed, OWN) is None, command
    assert allows("* *", command)


_SEGMENTS = st.sampled_from(
    [
        ".git",
        ".GIT",
        " .git",
        ".gitx",
        ".workbench",
        "a",
        "b",
        "..",
        ".",
        "",
        "workbench.toml",
        "pyproject.TOML",
        "my rules.toml",
        "conf",
        "rules.toml",
        "x.git",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_SEGMENTS, min_size=1, max_size=6), st.booleans())
def test_property_a_path_word_is_protected_as_its_tails_are(
    segments: list[str], absolute: bool
) -> None:
    from workbench.permissions.commands import SimpleCommand
    from workbench.permissions.protected import protected_root

    path = ("/" if absolute else "") + "/".join(segments)
    files = ("my rules.toml", "conf/rules.toml")
    parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".")]
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    expected = any(protected_root(tail, files) for tail in tails)
    command = SimpleCommand(("cat", path), ("cat", quote(path)))
    assert (names_protected(command, files) is not None) is expected


def test_naming_a_protected_path_is_judged_in_work_linear_in_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workbench.permissions import commands

    examined = [0]
    tails, starts = commands._any_tail_protected, commands._protected_from

    def counted_tails(folded: list[str], own: list[list[str]]) -> bool:
        examined[0] += len(folded) + 1
        return tails(folded, own)

    def counted_starts(first: str, rest: list[str], own: list[list[str]]) -> bool:
        examined[0] += 1
        return starts(first, rest, own)

    monkeypatch.setattr(commands, "_any_tail_protected", counted_tails)
    monkeypatch.setattr(commands, "_protected_from", counted_starts)
    for word in ["-" + ".gi" * 1300 + "/a" * 1000, "a/" * 2000, "-x" + ".git" * 900 + "/a" * 1000]:
        examined[0] = 0
        parsed = literal_command("cat " + word)
        assert parsed is not None
        found = names_protected(parsed, ("conf/rules.toml",))
        assert found == (word if ".git" in word else None)
        assert examined[0] <= 4 * len(word), examined[0]


# -- what the dialog suggests -----------------------------------------------------------

EXACT_ONLY = [
    "uv run pytest -q",
    "uv tool run ruff",
    "busybox sh -c x",
    "toybox rm x",
    "git submodule foreach rm -rf .",
    "git bisect run sh -c x",
    "git rebase main --exec x",
    "env FOO=1 pytest",
    "xargs -0 rm x",
    "sudo apt install x",
    "npx some-package run",
    "npm exec some-package x",
    "pnpm dlx pkg x",
    "bash -c 'rm -rf ~'",
    "bash script.sh x",
    "python -c 'import os' x",
    "/usr/bin/env python x",
    "poetry run pytest x",
    "docker run image sh",
    "r'm' build dist",
    "\\rm build dist",
    "git 'commit' -m x",
    "git log $(id) x",
    "git log x > out",
    "git log .git/config x",
]


@pytest.mark.parametrize("command", EXACT_ONLY)
def test_some_commands_are_only_ever_suggested_exactly(command: str) -> None:
    pattern = suggest_pattern("run_command", {"command": command})
    assert pattern.args == (("command", command),)
    assert pattern.matches("run_command", {"command": command})


RUNS_OTHERS = (
    "rm sudo su doas pkexec runuser sh bash zsh fish dash ksh csh tcsh busybox toybox env xargs "
    "parallel exec eval command builtin nohup nice ionice chrt taskset timeout time watch entr "
    "stdbuf setsid chroot unshare nsenter flock strace ltrace gdb valgrind script expect tmux "
    "screen ssh find npx pnpx bunx uvx pipx fakeroot firejail systemd-run dbus-run-session "
    "nix-shell"
).split()
RUNS_OTHERS_WITH = [
    ("uv", "run"),
    ("uv", "tool"),
    ("npm", "exec"),
    ("npm", "x"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("bun", "x"),
    ("bun", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("conda", "run"),
    ("mamba", "run"),
    ("pixi", "run"),
    ("pixi", "exec"),
    ("git", "submodule"),
    ("git", "bisect"),
    ("git", "rebase"),
    ("git", "filter-branch"),
    ("git", "difftool"),
    ("git", "mergetool"),
    ("docker", "run"),
    ("docker", "exec"),
    ("podman", "run"),
    ("podman", "exec"),
    ("kubectl", "exec"),
    ("kubectl", "run"),
    ("kubectl", "debug"),
    ("nix", "run"),
    ("nix", "shell"),
    ("nix", "develop"),
]


@pytest.mark.parametrize("program", RUNS_OTHERS)
def test_programs_that_run_others_are_suggested_exactly(program: str) -> None:
    assert runs_others([program, "a", "b"]) and runs_others([f"/usr/bin/{program}"])
    command = f"{program} target more args"
    assert suggest_pattern("run_command", {"command": command}).args == (("command", command),)


@pytest.mark.parametrize(("program", "first"), RUNS_OTHERS_WITH)
def test_programs_that_run_others_after_a_first_argument(program: str, first: str) -> None:
    assert runs_others([program, first, "x"]) and runs_others([f"/opt/{program}", first])
    assert not runs_others([program, "status", first]) and not runs_others([program])
    command = f"{program} {first} some-tool x"
    assert suggest_pattern("run_command", {"command": command}).args == (("command", command),)
    other = f"{program} list x"
    assert suggest_pattern("run_command", {"command": other}).args == (
        ("command", f"{program} list *"),
    )


def test_runs_others_knows_programs_and_their_first_arguments() -> None:
    assert runs_others(["/usr/local/bin/uv", "run", "x"])
    assert not runs_others(["uv", "pip", "list"])
    assert runs_others(["npx"])
    assert not runs_others(["git", "log"]) and runs_others(["git", "submodule"])
    assert not runs_others(["git"]) and not runs_others(["uv", ""])


def test_a_parsed_command_cannot_be_changed_once_cached() -> None:
    from dataclasses import FrozenInstanceError

    parsed = literal_command("git log x")
    assert parsed is not None and parsed is literal_command("git log x")
    with pytest.raises(FrozenInstanceError):
        parsed.words = ("rm", "-rf", "x")  # type: ignore[misc]


@pytest.mark.parametrize(
    "command",
    [
        "git log 'a\x1bb'",
        "git log 'a\u202eb'",
        "git log 'a\nb'",
        "git log 'a\u200bb'",
        "git log 'a\x7f'",
    ],
)
def test_a_control_or_invisible_character_even_quoted_is_not_literal(command: str) -> None:
    assert literal_command(command) is None and not allows("git log *", command)


def test_plain_commands_are_suggested_by_program_and_first_argument() -> None:
    for command, glob in [
        ("git commit -m 'a b'", "git commit *"),
        ("npm run build --silent", "npm run *"),
        ("./script.sh build x", "./script.sh build *"),
        ("uv pip install x", "uv pip *"),
    ]:
        pattern = suggest_pattern("run_command", {"command": command})
        assert pattern.args == (("command", glob),)
        assert not pattern.matches("run_command", {"command": command.split()[0] + " x $(id)"})


# -- property tests ---------------------------------------------------------------------

_EXPANSIONS = [
    "$X",
    "${X}",
    "${X:-a}",
    "${X:=\\$\\(touch\\ F\\)}",
    "${X@P}",
    "${HOME:Y}",
    "${#X}",
    "${!X}",
    "${X/a/b}",
    "$((1+2))",
    "$[1+2]",
    "$(touch F)",
    "`touch F`",
    "$0",
    "$@",
    "$$",
    "$'\\x41'",
    '$"x"',
]
_UNQUOTED_ONLY = [
    "<(touch F)",
    ">(touch F)",
    "~",
    "~root",
    "{a,b}",
    "{1..3}",
    "*",
    "?",
    "[ab]",
    "> F",
    "< F",
    "; touch F",
    "&& touch F",
    "| sh",
    "& touch F",
    "\ntouch F",
    "<<EOF\nx\nEOF",
    "<<< x",
    "# c",
]
_PLAIN = st.from_regex(r"[A-Za-z0-9_./:@%+,=-]{1,8}", fullmatch=True)


@st.composite
def expansion(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(_EXPANSIONS))
    if depth < 2 and draw(st.booleans()):
        inner = draw(expansion(depth + 1))
        kind = draw(st.sampled_from(["${X:-%s}", '"$(echo %s)"', "$(echo %s)", '"%s"'])) % inner
    return kind


@st.composite
def non_literal_argument(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(["bare", "double", "concat", "unquoted"]))
    if shape == "unquoted":
        core = draw(st.sampled_from(_UNQUOTED_ONLY))
    else:
        core = draw(expansion())
    if shape == "double":
        core = f'"a{core}b"'
    elif shape == "concat":
        core = draw(_PLAIN) + core + draw(st.sampled_from(["", "x", "'q'", '"q"']))
    return core


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PLAIN, max_size=3),
    non_literal_argument(),
    st.lists(_PLAIN, max_size=2),
    st.sampled_from(["git log *", "git log **", "git *", "*", "git log -* *"]),
)
def test_property_no_expansion_is_ever_matched_by_a_glob(
    before: list[str], bad: str, after: list[str], glob: str
) -> None:
    command = " ".join(["git", "log", *before, bad, *after])
    assert not allows(glob, command)


_QUOTABLE = st.text(
    st.characters(categories=("L", "N", "P", "S"), include_characters=" ", exclude_characters="'"),
    max_size=6,
)
_ESCAPABLE = st.sampled_from(list("$;&|<>(){}*?[]~#!'\" ab"))


@st.composite
def literal_word(draw: st.DrawFn) -> tuple[str, str]:
    """(word as written, its value)."""
    raw, value = "", ""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["plain", "single", "double", "escape"]))
        if kind == "plain":
            part = draw(_PLAIN)
            raw, value = raw + part, value + part
        elif kind == "single":
            part = draw(_QUOTABLE)
            raw, value = raw + f"'{part}'", value + part
        elif kind == "double":
            part = draw(_QUOTABLE.filter(lambda t: not set(t) & set('"$`\\')))
            raw, value = raw + f'"{part}"', value + part
        else:
            char = draw(_ESCAPABLE)
            raw, value = raw + "\\" + char, value + char
    return raw, value


_READ_APART = re.compile(r"['\"]\\|(?:^|[ \t])\\[ \t]")
"""Where tree-sitter reads a literal word apart from bash (a backslash right after a
quote, or an escaped blank opening a word): the command is refused, never misread."""

literal_words = st.lists(literal_word(), max_size=4)
_BLANKS = st.sampled_from([" ", "  ", "\t", " \t "])


@settings(max_examples=300, deadline=None)
@given(literal_words, _BLANKS)
@example([("0", "0"), ("'.GIT'", ".GIT")], " ")  # a protected path: no glob allows it
def test_property_literal_commands_match_as_documented(
    words: list[tuple[str, str]], blank: str
) -> None:
    command = blank.join(["git", "log", *(raw for raw, _ in words)])
    parsed = literal_command(command)
    if parsed is None:  # see _READ_APART
        assert _READ_APART.search(command), command
        return
    assert parsed.words == ("git", "log", *(value for _, value in words))
    protected = names_protected(parsed) is not None  # a word may be `.GIT`
    assert allows("git log*", command) is allows("*", command) is not protected
    assert allows(escape_glob(" ".join(["git", "log", *(quote(v) for _, v in words)])), command)
    again = literal_command(parsed.canonical)
    assert again is not None and again.words == parsed.words


@settings(max_examples=25, deadline=None)
@given(literal_words)
def test_property_the_words_are_the_ones_bash_runs(words: list[tuple[str, str]]) -> None:
    command = " ".join(["printf", "'%s\\0'", *(raw for raw, _ in words)])
    parsed = literal_command(command)
    if parsed is None:
        assert _READ_APART.search(command), command
        return
    out = subprocess.run(["bash", "-c", command], capture_output=True, check=True, timeout=10)
    ran = out.stdout.decode().split("\0")[:-1] if words else []
    assert tuple(ran) == parsed.words[2:]


# -- globs, tool names, other styles ----------------------------------------------------


def test_a_glob_that_cannot_be_read_fails_when_the_pattern_is_made() -> None:
    for make in [
        lambda: CallPattern.parse('run_command(command="x[z-a]")'),
        lambda: CallPattern.parse('t(q="[9-0]")'),
        lambda: CallPattern.parse('t(path="src/[z-a]")'),
        lambda: CallPattern.parse("read_[z-a]"),
    ]:
        with pytest.raises(PatternError, match="z-a|9-0"):
            make()
    with pytest.raises(GlobError, match="bad character range z-a"):
        Glob.parse("[z-a]")


def test_double_star_matches_shell_characters_in_text_and_paths() -> None:
    for value in ["a; b", "a & b", "a | b", "a < b", "a > b", "a $(b)", "`b`", "a\nb"]:
        assert CallPattern.parse('t(q="**")').matches("t", {"q": value})
        assert CallPattern.parse('t(q="a *")').matches("t", {"q": value}) is value.startswith("a ")
        assert CallPattern.parse('t(path="**")').matches("t", {"path": value})


def test_command_and_text_values_are_never_normalised_like_paths() -> None:
    assert not CallPattern.parse('t(q="b")').matches("t", {"q": "./a/../b"})
    assert not CallPattern.parse('t(q="a/")').matches("t", {"q": "a"})
    assert CallPattern.parse('t(q="./a/../b")').matches("t", {"q": "./a/../b"})
    assert not allows("cat b", "cat ./a/../b")
    assert not allows("cat ./a/../b *", "cat b x")
    assert CallPattern.parse('t(path="./a/../b")').matches("t", {"path": "b/"})


def test_a_path_value_beyond_the_limit_is_allowed_by_no_path_glob() -> None:
    long = "src/" + "a" * MAX_PATH
    pattern = CallPattern.parse('t(path="src/**")')
    assert not pattern.matches("t", {"path": long})
    assert pattern.matches("t", {"path": long}, widen=True)
    assert pattern.matches("t", {"path": long[:MAX_PATH]})


@pytest.mark.parametrize("server", ["my-files", "my_files", "MyFiles", "A-b_C9"])
def test_mcp_server_names_with_dashes_underscores_and_capitals(server: str) -> None:
    pattern = CallPattern.parse(f"mcp:{server}")
    assert pattern.tool == f"{server}__*"
    assert pattern.matches(f"{server}__read", {})
    assert not pattern.matches(f"{server.lower()}x__read", {})
    assert not pattern.matches(f"other__{server}", {})


def test_a_literal_tool_name_is_never_a_glob() -> None:
    assert literal_tool("read_file") == "read_file"
    assert literal_tool("a*b?[c") == "a[*]b[?][[]c"
    assert literal_tool("mcp:files") == "[m]cp:files"
    for name in ["a*b?[c", "mcp:files", "x__y"]:
        pattern = CallPattern(literal_tool(name))
        assert pattern.exact_tool == name and pattern.matches(name, {})
    assert not CallPattern(literal_tool("a*b")).matches("aXb", {})
    assert not CallPattern(literal_tool("mcp:files")).matches("files__read", {})
    with pytest.raises(PatternError):
        literal_tool("a b")


def test_rules_file_protection_follows_the_gate(tmp_path: Path) -> None:
    from workbench.permissions import PermissionGate

    (tmp_path / "my rules.toml").write_text("")
    gate = PermissionGate.for_workspace(
        tmp_path, allow=['run_command(command="cat *")'], rules_file=tmp_path / "my rules.toml"
    )
    assert gate.judge("run_command", {"command": "cat a.txt"})[1] == "allow"
    assert gate.judge("run_command", {"command": "cat 'my rules.toml'"})[1] == "ask"
    assert gate.judge("run_command", {"command": "cat .git/HEAD"})[1] == "ask"


@pytest.mark.parametrize(
    ("glob", "text", "ok"),
    [
        ("[a-]", "-", True),  # a dash at the end of a class is itself
        ("[a-]", "a", True),
        ("[a-a]", "a", True),  # a range of one character
        ("[a-cx]", "x", True),  # a range, then a single character
        ("[a-cx]", "b", True),
        ("[a-cx]", "d", False),
        ("*?c*", "abc", True),  # a wildcard piece at the last place it fits
        ("*?c*", "ab", False),
        ("*[ab]c*[xy]z", "qacqyz", True),
        ("*[ab]c*[xy]z", "qacqy", False),
        ("*ab*ba*", "ba ab", False),  # each piece is looked for after the one before
        ("*ab*ba*", "ab ba", True),
        ("*a?*?a*", "aXa", False),
        ("*a?*?a*", "aXYa", True),
        ("x*", "", False),
        ("*x", "x", True),
        ("", "", True),
    ],
)
def test_glob_pieces_and_classes(glob: str, text: str, ok: bool) -> None:
    assert Glob.parse(glob).matches(text) is ok


def test_a_glob_is_frozen_and_knows_its_literal_text() -> None:
    from dataclasses import FrozenInstanceError

    glob = Glob.parse("a[*]b")
    assert glob.literal == "a*b" and Glob.parse("a*b").literal is None
    assert Glob.parse("[ab]").literal is None and Glob.parse("[!a]").literal is None
    assert Glob.parse("[a-c]").literal is None and Glob.parse("a?").literal is None
    with pytest.raises(FrozenInstanceError):
        glob.pieces = ()  # type: ignore[misc]


def test_each_argument_name_has_its_style() -> None:
    from workbench.permissions.patterns import style_of

    names = ["path", "file_path", "command", "cmd", "commands", "query", "pathname"]
    assert [style_of(n) for n in names] == [
        "path",
        "path",
        "command",
        "command",
        "text",
        "text",
        "text",
    ]


def test_the_path_limit_is_four_kib_of_characters() -> None:
    pattern = CallPattern.parse('t(path="src/**")')
    assert pattern.matches("t", {"path": "src/" + "a" * 4092})
    assert not pattern.matches("t", {"path": "src/" + "a" * 4093})


@pytest.mark.parametrize(
    ("glob", "text", "ok"),
    [
        ("[xya-c]", "-", False),  # the range is read as one element, the dash with it
        ("[xya-c]", "b", True),
        ("*ab*b", "ab", False),  # a middle piece may not overlap the last one
        ("*ab*ba*", "ab ba ab", True),  # the leftmost place, not the rightmost
    ],
)
def test_glob_pieces_in_place(glob: str, text: str, ok: bool) -> None:
    assert Glob.parse(glob).matches(text) is ok


def test_path_globs_read_classes_like_the_other_globs() -> None:
    from tests.permissions.test_security_gate import GLOBS

    for glob, value, ok in GLOBS:
        assert CallPattern.of("t", {"path": glob}).matches("t", {"path": value}) is ok, glob
