"""The rules file takes any text a model can send, and is always one that loads.

Before: a rule saved with a DEL character made the rules file unloadable for every
later start, and a lone surrogate left an empty `rules.toml` behind a crash.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.agent import (
    AbortController,
    AgentContext,
    AssistantMessage,
    BeforeToolCallContext,
    ToolCall,
)
from workbench.permissions import (
    AnswerError,
    CallPattern,
    PatternError,
    PermissionAnswer,
    PermissionGate,
    RuleError,
    append_rule,
    load_rules,
    load_rules_file,
)
from workbench.tools import builtin_tools


def _pattern(command: str) -> CallPattern:
    return CallPattern("run_command", (("command", command),))


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(st.characters(exclude_categories=["Cs"]), max_size=12))
def test_any_text_without_surrogates_round_trips(tmp_path: Path, text: str) -> None:
    try:
        _pattern(text).matches("run_command", {"command": text})  # a glob the matcher takes
    except PatternError:
        return
    path = tmp_path / "rules.toml"
    path.unlink(missing_ok=True)
    saved = append_rule(path, _pattern(text), "allow", "R")
    [loaded] = load_rules_file(path, "R")
    assert loaded.pattern == _pattern(text) and loaded.source == saved.source


def test_a_rule_with_del_and_controls_loads_at_every_later_start(tmp_path: Path) -> None:
    path = tmp_path / ".workbench" / "rules.toml"
    for command in ("rm\x7f -rf", "a\x1b]2;t\x07b", "x\u202ey\u200b", "tab\there", 'q"\\'):
        append_rule(path, _pattern(command), "allow", "R")
    text = path.read_text(encoding="utf-8")
    assert "\x7f" not in text and "\x1b" not in text and "\u202e" not in text  # all escaped
    rules = load_rules(tmp_path)
    assert rules.match("run_command", {"command": "rm\x7f -rf"}).action == "allow"  # type: ignore[union-attr]
    assert [r.pattern.args[0][1] for r in load_rules_file(path)] == [
        "rm\x7f -rf",
        "a\x1b]2;t\x07b",
        "x\u202ey\u200b",
        "tab\there",
        'q"\\',
    ]


def test_a_lone_surrogate_is_refused_and_the_file_is_untouched(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    append_rule(path, _pattern("pytest *"), "allow", "R")
    before = path.read_bytes()
    with pytest.raises(RuleError, match="U\\+D800 \\(a lone surrogate\\)"):
        append_rule(path, _pattern("cat \ud800"), "allow", "R")
    assert path.read_bytes() == before and len(load_rules_file(path)) == 1


def test_the_file_is_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rules.toml"
    append_rule(path, _pattern("pytest *"), "allow", "R")
    before = path.read_bytes()

    def crash(*_args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        append_rule(path, _pattern("make *"), "allow", "R")
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["rules.toml"]  # no temporary file left behind


def test_a_rules_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_bytes(b'[[rule]]\ntool = "\xff"\naction = "allow"\n')
    with pytest.raises(RuleError, match=r"rules.toml:\d+: the rules file is not UTF-8 text"):
        load_rules_file(path)


async def test_saving_a_surrogate_pattern_from_the_gate_is_refused_and_stays_pending(
    tmp_path: Path,
) -> None:
    gate = PermissionGate.for_workspace(tmp_path)
    tool = next(t for t in builtin_tools(tmp_path) if t.name == "run_command")
    args = {"command": "\ud800"}
    call = ToolCall(id="c1", name=tool.name, arguments=args)
    ctx = BeforeToolCallContext(
        AssistantMessage(content=[call], stop_reason="toolUse"),
        call,
        tool.parameters.model_validate(args),
        AgentContext(tools=[tool]),
        tool,
    )
    out: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def hook() -> None:
            out.append(await gate(ctx, AbortController().signal))

        tg.start_soon(hook)
        while not gate.pending:
            await anyio.sleep(0.001)
        request = gate.pending[0]
        assert "\ud800" in request.suggested_pattern
        with pytest.raises(AnswerError, match="lone surrogate"):
            gate.decide(request.request_id, PermissionAnswer.always_pattern(save=True))
        assert gate.pending == [request]
        assert not (tmp_path / ".workbench" / "rules.toml").exists()
        gate.decide(request.request_id, PermissionAnswer.always_pattern(save=False))
    assert out == [None]  # allowed for this session
