"""Pipelines and lists a command rule names explicitly (issue 36).

`run_command(command="git log * | head *")` allows a two-stage pipeline whose stages
each match their glob, and nothing else; every stage must be a literal simple command.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.permissions.test_command_rules import _PLAIN, allows, non_literal_argument
from workbench.permissions import CallPattern, PatternError, RuleSet
from workbench.permissions.pipelines import OPERATORS, literal_list, split_glob
from workbench.permissions.rules import Rule

PROGRAMS = ["git", "head", "grep", "make"]
_OPERATORS = sorted(OPERATORS)
_BLANKS = st.sampled_from([" ", "  ", "\t", " \t "])


def test_a_pipeline_rule_matches_that_pipeline_and_nothing_else() -> None:
    glob = "git log * | head *"
    assert allows(glob, "git log --oneline | head -5")
    assert allows(glob, "git log -p x.py|head -n 3")  # no blanks needed around an operator
    assert not allows(glob, "git log --oneline")
    assert not allows(glob, "git log x | head -5 | sh")
    assert not allows(glob, "git log x && head -5")
    assert not allows(glob, "git log x |& head -5")
    assert not allows(glob, "git log x | head -5 &")
    assert not allows(glob, "git log x | head -5;")
    assert not allows(glob, "git log x | head -5 > out")
    assert not allows(glob, "git log $(id) | head -5")
    assert not allows(glob, "git log x | head $HOME")
    assert not allows(glob, "git log x\nhead -5")
    assert not allows(glob, "(git log x) | head -5")
    assert not allows(glob, "! git log x | head -5")
    assert not allows(glob, "git log x | X=1 head -5")
    assert not allows("git log *", "git log x | head -5")  # one stage allows one command


@pytest.mark.parametrize("operator", _OPERATORS)
def test_each_operator_is_named_by_itself(operator: str) -> None:
    command = f"make a {operator} make b"
    for other in _OPERATORS:
        assert allows(f"make * {other} make *", command) is (other == operator), other


def test_an_operator_inside_quotes_or_a_word_does_not_split_a_glob() -> None:
    assert split_glob("git log * | head *") == (("git log *", "head *"), ("|",))
    assert split_glob("a && b || c ; d") == (("a", "b", "c", "d"), ("&&", "||", ";"))
    assert split_glob("echo '|' x") == (("echo '|' x",), ())
    assert split_glob("echo 'a | b' x") == (("echo 'a | b' x",), ())
    assert split_glob(r"echo \| x") == ((r"echo \| x",), ())
    assert split_glob("echo a|b x") == (("echo a|b x",), ())
    assert split_glob("echo |& x") == (("echo |& x",), ())
    assert split_glob("echo & x") == (("echo & x",), ())
    assert split_glob("echo x |") == (("echo x |",), ())
    assert split_glob("'a | b' x | y") == (("'a | b' x", "y"), ("|",))  # quoted from the start
    assert split_glob("\\ | x") == (("\\ | x",), ())  # an escaped blank is part of a word
    assert split_glob("\\a | b") == (("\\a", "b"), ("|",))  # an escape takes one character
    assert allows("echo '|' *", "echo '|' x")
    assert not allows("echo '|' *", "echo | x")


def test_a_list_is_read_stage_by_stage() -> None:
    listed = literal_list("git log 'a b' | head -5 && make x")
    assert listed is not None
    assert [stage.words for stage in listed.stages] == [
        ("git", "log", "a b"),
        ("head", "-5"),
        ("make", "x"),
    ]
    assert listed.operators == ("|", "&&")
    for command in ["a | b &", "a |& b", "a & b", "{ a; } | b", "a | (b)", "a | b 2>x", "", " "]:
        assert literal_list(command) is None, command
    assert literal_list("a;b") is not None and literal_list(" a ; b ") is not None


def test_a_stage_naming_a_protected_path_is_not_allowed_by_wildcards() -> None:
    assert not allows("cat * | tee *", "cat x | tee .git/hooks/pre-commit")
    assert not allows("cat * | tee *", "cat .workbench/rules.toml | tee x")
    assert allows("cat * | tee *", "cat x | tee y")
    exact = "cat x | tee .git/hooks/pre-commit"
    assert allows(exact, exact)  # named exactly: the user's own call


def test_a_deny_of_one_command_denies_it_in_any_stage() -> None:
    rules = RuleSet(
        [
            Rule.parse('run_command(command="* | *")', "allow", "cli"),
            Rule.parse('run_command(command="* && *")', "allow", "cli"),
            Rule.parse('run_command(command="rm *")', "deny", "cli"),
        ]
    )
    for command in ["ls | rm -rf x", "rm -rf x | cat", "ls && rm -rf x"]:
        rule = rules.match("run_command", {"command": command})
        assert rule is not None and rule.action == "deny", command
    rule = rules.match("run_command", {"command": "ls | cat"})
    assert rule is not None and rule.action == "allow"


def test_a_bad_glob_in_any_stage_fails_when_the_rule_is_read() -> None:
    with pytest.raises(PatternError, match="z-a"):
        CallPattern.parse('run_command(command="git log * | head [z-a]")')


def test_a_list_over_the_size_limit_is_beyond_every_glob() -> None:
    command = "git log x | head " + "a" * 9000
    assert literal_list(command) is None
    assert not allows("git log * | head *", command)


Stages = tuple[list[list[str]], list[str], list[str]]


@st.composite
def command_list(draw: st.DrawFn) -> Stages:
    """(stages as words, operators, blanks around each operator): literal stages."""
    n = draw(st.integers(1, 4))
    stages = [
        [draw(st.sampled_from(PROGRAMS)), *draw(st.lists(_PLAIN, min_size=1, max_size=3))]
        for _ in range(n)
    ]
    operators = [draw(st.sampled_from(_OPERATORS)) for _ in range(n - 1)]
    blanks = [draw(_BLANKS) for _ in range(n - 1)]
    return stages, operators, blanks


def joined(stages: list[list[str]], operators: list[str], blanks: list[str]) -> str:
    text = " ".join(stages[0])
    for operator, blank, stage in zip(operators, blanks, stages[1:], strict=True):
        text += f"{blank}{operator}{blank}" + " ".join(stage)
    return text


@st.composite
def list_glob(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """(glob naming a list of `PROG *` stages, its programs, its operators)."""
    n = draw(st.integers(1, 4))
    programs = [draw(st.sampled_from(PROGRAMS)) for _ in range(n)]
    operators = [draw(st.sampled_from(_OPERATORS)) for _ in range(n - 1)]
    glob = programs[0] + " *"
    for operator, program in zip(operators, programs[1:], strict=True):
        glob += f" {operator} {program} *"
    return glob, programs, operators


@settings(max_examples=120, deadline=None)
@given(command_list(), list_glob())
def test_property_a_list_glob_matches_exactly_the_lists_of_its_shape(
    command: Stages, glob: tuple[str, list[str], list[str]]
) -> None:
    stages, operators, _ = command
    pattern, want_programs, want_operators = glob
    fits = [stage[0] for stage in stages] == want_programs and operators == want_operators
    assert allows(pattern, joined(*command)) is fits


@settings(max_examples=120, deadline=None)
@given(command_list(), st.data())
def test_property_no_expansion_in_any_stage_is_ever_matched(
    command: Stages, data: st.DataObject
) -> None:
    stages, operators, blanks = command
    glob = " ".join(["*", *(f"{operator} *" for operator in operators)])
    assert allows(glob, joined(stages, operators, blanks))
    target = data.draw(st.integers(0, len(stages) - 1))
    at = data.draw(st.integers(1, len(stages[target])))
    stages[target].insert(at, data.draw(non_literal_argument()))
    assert not allows(glob, joined(stages, operators, blanks))
