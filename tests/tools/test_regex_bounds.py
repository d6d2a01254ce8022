"""A catastrophic regex is a clear error for that call, never a frozen process."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from workbench import safe_regex
from workbench.agent import AbortController, AbortError, AgentTool, AgentToolResult
from workbench.agent.arguments import ArgumentsError, validate_arguments
from workbench.tools import builtin_tools

SLOW = r"(a|aa)+$"
"""Exponential in `re` and in `regex` alike on a run of a's that does not end the line."""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("a" * 40 + "!\n" + "plain line\n")
    return tmp_path


def search_tool(root: Path) -> AgentTool:
    return next(t for t in builtin_tools(root) if t.name == "search_files")


async def test_a_catastrophic_search_pattern_is_that_calls_clear_error(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(safe_regex, "MATCH_TIMEOUT", 0.2)
    tool = search_tool(ws)
    started = time.monotonic()
    with pytest.raises(safe_regex.RegexTimeout, match=r"took longer than 0\.2s on one line"):
        await tool.execute(
            "c", tool.parameters(pattern=SLOW), AbortController().signal, lambda _u: None
        )
    assert time.monotonic() - started < 5
    # The same tool goes on working for a sane pattern.
    params = tool.parameters(pattern="plain")
    result = await tool.execute("c", params, AbortController().signal, lambda _u: None)
    assert result.content[0].text == "a.txt:2: plain line"


async def test_abort_ends_a_slow_search_at_once(ws: Path) -> None:
    # Many lines, each under the per-line bound but slow together: only the abort stops it.
    (ws / "a.txt").write_text(("a" * 18 + "!\n") * 5000)
    tool = search_tool(ws)
    controller = AbortController()
    started = time.monotonic()

    async def abort_soon() -> None:
        await anyio.sleep(0.2)
        controller.abort("user pressed ctrl+c")

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        with pytest.raises(AbortError, match="Operation aborted: user pressed ctrl\\+c"):
            await tool.execute("c", tool.parameters(pattern=SLOW), controller.signal, lambda _: 0)
    assert time.monotonic() - started < 1.0


def test_an_invalid_pattern_is_a_clear_error() -> None:
    with pytest.raises(safe_regex.RegexSyntaxError, match=r"Invalid regular expression '\(x'"):
        safe_regex.compile_pattern("(x")


async def _never(*_: object) -> AgentToolResult:
    raise AssertionError("execute must not run")


@pytest.mark.parametrize(
    "schema, args",
    [
        (
            {"type": "object", "properties": {"s": {"type": "string", "pattern": SLOW}}},
            {"s": "a" * 31 + "!"},
        ),
        (
            {"type": "object", "patternProperties": {SLOW: {"type": "string"}}},
            {"a" * 31 + "!": "x"},
        ),
        (
            {"type": "object", "patternProperties": {SLOW: {}}, "additionalProperties": False},
            {"a" * 31 + "!": "x"},
        ),
    ],
    ids=["pattern", "patternProperties", "additionalProperties"],
)
def test_a_schema_pattern_is_matched_under_the_time_bound(
    schema: dict, args: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(safe_regex, "MATCH_TIMEOUT", 0.2)
    tool = AgentTool("t", "T", "d", schema, _never)
    started = time.monotonic()
    with pytest.raises(
        ArgumentsError,
        match=r"Validating arguments for tool t failed: "
        r"Regular expression .* took longer than 0\.2s",
    ):
        validate_arguments(tool, args)
    assert time.monotonic() - started < 5


def test_schema_patterns_still_judge_arguments() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": r"^[A-Z]\d$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    tool = AgentTool("t", "T", "d", schema, _never)
    assert validate_arguments(tool, {"code": "A1", "x-n": 3}).model_dump() == {
        "code": "A1",
        "x-n": 3,
    }
    with pytest.raises(ArgumentsError) as info:
        validate_arguments(tool, {"code": "a1", "x-n": "three", "other": 1})
    message = str(info.value)
    assert "code: String should match pattern" in message or "does not match" in message
    assert "x-n: Input should be a valid integer" in message
    assert "other: Extra inputs are not permitted" in message


def test_many_patterned_values_share_one_time_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.agent import schema_patterns

    monkeypatch.setattr(schema_patterns, "SCHEMA_TIME_LIMIT", 0.5)
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string", "pattern": SLOW}}},
    }
    tool = AgentTool("t", "T", "d", schema, _never)
    # Each value alone stays under the per-value bound; twenty of them would not.
    values = ["a" * 24 + "!"] * 30
    started = time.monotonic()
    with pytest.raises(ArgumentsError, match=r"took longer than 0\.5s in all"):
        validate_arguments(tool, {"items": values})
    assert time.monotonic() - started < 3
