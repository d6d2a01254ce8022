"""Rules say exactly what they were written to say: literal tool names, hints on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.permissions import AnswerError, PendingRequest, PermissionAnswer, Rule
from workbench.permissions.answers import always_rule
from workbench.permissions.hints import ToolHints, apply_hints
from workbench.permissions.patterns import CallPattern
from workbench.permissions.rules import load_rules_file


def request(tool_name: str) -> PendingRequest:
    return PendingRequest("r1", "c1", tool_name, {}, {}, None, tool_name)


@pytest.mark.parametrize("name", ["srv__get[x]", "srv__a*", "srv__a?", "mcp:files", "read_file"])
def test_always_allowing_a_tool_names_that_tool_only(name: str, tmp_path: Path) -> None:
    rule = always_rule(request(name), PermissionAnswer.always_tool(), None, None)
    assert rule.pattern.exact_tool == name and rule.pattern.matches(name, {})
    for other in ["srv__getx", "srv__ab", "files__read", "read_fil"]:
        assert not rule.pattern.matches(other, {})
    path = tmp_path / "rules.toml"
    saved = always_rule(request(name), PermissionAnswer.always_tool(save=True), path, "R")
    (loaded,) = load_rules_file(path, "R")
    assert loaded.pattern == saved.pattern == rule.pattern


def test_a_tool_name_no_pattern_can_hold_is_refused_clearly() -> None:
    with pytest.raises(AnswerError, match="Invalid tool name pattern 'a b'"):
        always_rule(request("a b"), PermissionAnswer.always_tool(), None, None)


def test_a_destructive_tool_is_allowed_by_its_literal_name_not_by_a_glob() -> None:
    hints = ToolHints(destructive=True)
    name = "srv__rm*"
    literal = Rule(CallPattern("srv__rm[*]"), "allow", "session")
    assert apply_hints(name, literal, "allow", hints) == (literal, "allow")
    wide = Rule(CallPattern("srv__*"), "allow", "flag")
    assert apply_hints(name, wide, "allow", hints) == (None, "ask")
    same_text_as_glob = Rule(CallPattern("srv__rm*"), "allow", "flag")  # a glob, not the name
    assert apply_hints(name, same_text_as_glob, "allow", hints) == (None, "ask")
