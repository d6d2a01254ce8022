"""A tool's MCP annotations, believed only where that cannot let more through: a
destructive tool is not allowed by a wildcard rule, a read-only one is allowed by
default only when the user trusts the server's hints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.helpers import TOOLBOX, calls
from tests.widgets.helpers import wait_for
from workbench.bus_events import PermissionDecisionEvent
from workbench.mcp import server_from_command
from workbench.permissions.hints import ToolHints, apply_hints
from workbench.permissions.patterns import CallPattern
from workbench.permissions.rules import Rule
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.app import make_app
from workbench.widgets.permission_modal import PermissionModal

DESTRUCTIVE = ToolHints(destructive=True, origin="mcp:s")
READ_ONLY = ToolHints(read_only=True, origin="mcp:s")


def rule(text: str, action: Any, source: str = "--allow") -> Rule:
    return Rule(CallPattern.parse(text), action, source)


@pytest.mark.parametrize(
    ("hints", "given", "expected"),
    [
        (DESTRUCTIVE, rule("s__*", "allow"), (None, "ask")),  # a wildcard does not cover it
        (DESTRUCTIVE, rule("s__rm", "allow"), ("s__rm", "allow")),  # a rule naming it does
        (DESTRUCTIVE, rule("s__*", "deny"), ("s__*", "deny")),
        (READ_ONLY, rule("*", "ask", "default"), ("*", "ask")),  # not trusted: shown only
        (
            ToolHints(read_only=True, trusted=True, origin="mcp:s"),
            rule("*", "ask", "default"),
            ("s__rm", "allow"),
        ),
        (
            ToolHints(read_only=True, trusted=True, origin="mcp:s"),
            rule("s__*", "ask"),
            ("s__*", "ask"),
        ),  # the user's own ask rule stands
        (
            ToolHints(read_only=True, destructive=True, trusted=True, origin="mcp:s"),
            rule("*", "ask", "default"),
            ("*", "ask"),
        ),
        (None, rule("s__*", "allow"), ("s__*", "allow")),
    ],
)
def test_hints_only_ever_make_the_gate_stricter_unless_trusted(
    hints: ToolHints | None, given: Rule, expected: tuple[str | None, str]
) -> None:
    decided, action = apply_hints("s__rm", given, given.action, hints)
    assert (decided.text if decided else None, action) == expected
    if action == "allow" and decided is not given:
        assert decided is not None and decided.source == "readOnlyHint of mcp:s (trust_hints)"


def _scenario(*turns: dict[str, Any]) -> Scenario:
    return Scenario.model_validate(
        {"name": "hints", "prompt": "go", "turns": [*turns, {"text": "done"}]}
    )


async def _decisions(tmp_path: Path, trust: bool) -> dict[str, PermissionDecisionEvent]:
    server = server_from_command(TOOLBOX).model_copy(update={"trust_hints": trust})
    runtime = build_runtime(
        RunOptions(
            scenario=_scenario(
                calls(("toolbox__two_blocks", {}), ("toolbox__fail", {"reason": "x"}))
            ),
            workspace=tmp_path,
            tools=[],
            mcp_servers=[server],
            approve="rules",
            allow=["mcp:toolbox"],
            record=False,
        )
    )
    seen: dict[str, PermissionDecisionEvent] = {}
    runtime.agent.subscribe(
        lambda e, _s=None: (
            seen.__setitem__(e.tool_name, e) if isinstance(e, PermissionDecisionEvent) else None
        )
    )
    assert runtime.mcp is not None
    with anyio.fail_after(30):
        async with runtime.mcp.attach(runtime.agent):
            await runtime.agent.prompt("go")
    return seen


async def test_a_destructive_tool_is_not_allowed_by_a_server_wide_rule(tmp_path: Path) -> None:
    seen = await _decisions(tmp_path, trust=False)
    assert seen["toolbox__two_blocks"].decision == "allow"  # the server-wide allow
    fail = seen["toolbox__fail"]
    assert fail.decision == "deny" and fail.decided_by == "policy"  # asked; rules-only run


async def test_trusted_read_only_hints_allow_by_default(tmp_path: Path) -> None:
    server = server_from_command(TOOLBOX).model_copy(update={"trust_hints": True})
    runtime = build_runtime(
        RunOptions(
            scenario=_scenario(calls(("toolbox__two_blocks", {}), ("toolbox__snapshot", {}))),
            workspace=tmp_path,
            tools=[],
            mcp_servers=[server],
            approve="rules",
            record=False,
        )
    )
    decisions: list[PermissionDecisionEvent] = []
    runtime.agent.subscribe(
        lambda e, _s=None: decisions.append(e) if isinstance(e, PermissionDecisionEvent) else None
    )
    assert runtime.mcp is not None
    with anyio.fail_after(30):
        async with runtime.mcp.attach(runtime.agent):
            await runtime.agent.prompt("go")
    by_tool = {d.tool_name: d for d in decisions}
    assert by_tool["toolbox__two_blocks"].decision == "allow"
    assert by_tool["toolbox__two_blocks"].rule_source == "readOnlyHint of mcp:toolbox (trust_hints)"
    assert by_tool["toolbox__snapshot"].decision == "deny"  # no hint: asked, and nobody to ask


async def test_the_dialog_shows_what_the_server_says(tmp_path: Path) -> None:
    runtime = build_runtime(
        RunOptions(
            scenario=_scenario(calls(("toolbox__fail", {"reason": "x"}))),
            workspace=tmp_path,
            tools=[],
            mcp=[TOOLBOX],
            record=False,
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal), timeout=20)
        line = str(app.screen.query_one("#perm-hints").render())
        assert line == "mcp:toolbox says: not read-only, destructive  · hints only; not trusted"
        await pilot.press("ctrl+n", "enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=20)
