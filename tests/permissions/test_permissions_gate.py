"""The permission gate, in isolation and through the real loop."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from tests.support.gate_calls import builtin_tool, call_context
from workbench.agent import (
    AbortController,
    Agent,
    AgentTool,
    BeforeToolCallContext,
    ToolResultMessage,
)
from workbench.bus_events import PermissionDecisionEvent, PermissionRequestEvent
from workbench.permissions import (
    AnswerError,
    PermissionAnswer,
    PermissionGate,
    RuleSet,
    default_rules,
    load_rules,
    rules_from_flags,
)
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.tools import builtin_tools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    (tmp_path / "config.json").write_text('{"model": "m"}\n')
    return tmp_path


class _NoArgs(BaseModel):
    pass


async def _never_runs(*_: Any) -> Any:
    raise AssertionError("the gate decides; it never runs the tool")


class Recorder:
    """A `publish` that records events (the bus stand-in for isolated tests)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def __call__(self, event: Any) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def gate_for(ws: Path, recorder: Recorder, **kwargs: Any) -> PermissionGate:
    return PermissionGate.for_workspace(ws, publish=recorder, **kwargs)


async def ask_and_answer(
    gate: PermissionGate, ctx: BeforeToolCallContext, answer: PermissionAnswer
) -> Any:
    """Run the hook until it asks, answer, and return the hook's result."""
    out: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def hook() -> None:
            out.append(await gate(ctx, AbortController().signal))

        tg.start_soon(hook)
        while not gate.pending:
            await anyio.sleep(0.001)
        await anyio.sleep(0.02)  # let the wait be measurable
        gate.decide(gate.pending[0].request_id, answer)
    return out[0]


# -- decisions by rule ---------------------------------------------------------------


async def test_read_only_tools_are_allowed_by_default(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    assert await gate(call_context(builtin_tool(ws, "read_file"), {"path": "config.json"})) is None
    (decision,) = rec.of(PermissionDecisionEvent)
    assert (decision.decision, decision.decided_by, decision.rule, decision.rule_source) == (
        "allow",
        "rule",
        "read_file",
        "default",
    )
    assert decision.request_id is None and decision.waited_ms == 0
    assert not rec.of(PermissionRequestEvent)


async def test_deny_rule_from_the_file_blocks_with_its_source(ws: Path) -> None:
    (ws / ".workbench").mkdir()
    (ws / ".workbench" / "rules.toml").write_text(
        '[[rule]]\ntool = "write_file"\nargs = { path = "config.*" }\naction = "deny"\n'
    )
    rec = Recorder()
    result = await gate_for(ws, rec)(
        call_context(builtin_tool(ws, "write_file"), {"path": "config.json", "content": ""})
    )
    assert result is not None and result.block
    assert result.reason == (
        'Permission denied by rule write_file(path="config.*") (.workbench/rules.toml:1)'
    )
    (decision,) = rec.of(PermissionDecisionEvent)
    assert decision.rule_source == ".workbench/rules.toml:1" and decision.decided_by == "rule"


async def test_flag_allow_skips_the_question(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec, allow=['run_command(command="pytest *")'])
    assert (
        await gate(call_context(builtin_tool(ws, "run_command"), {"command": "pytest -q"})) is None
    )
    assert rec.of(PermissionDecisionEvent)[0].rule_source == "--allow"


# -- asking --------------------------------------------------------------------------


async def test_ask_publishes_a_request_and_allow_once_lets_it_run(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    ctx = call_context(builtin_tool(ws, "run_command"), {"command": "pytest -q tests"})
    result = await ask_and_answer(gate, ctx, PermissionAnswer.allow_once())
    assert result is None and gate.pending == []
    (request,) = rec.of(PermissionRequestEvent)
    assert request.args == {"command": "pytest -q tests", "timeout": None}
    assert (request.rule, request.rule_source) == ("run_command", "default")
    assert request.suggested_pattern == 'run_command(command="pytest -q tests")'
    assert request.description.startswith("Run a shell command")
    (decision,) = rec.of(PermissionDecisionEvent)
    assert decision.request_id == request.request_id
    assert (decision.decision, decision.scope, decision.decided_by) == ("allow", "once", "user")
    assert decision.waited_ms >= 15
    # once means once: the next call asks again
    again = call_context(builtin_tool(ws, "run_command"), {"command": "pytest -q tests"}, "c2")
    await ask_and_answer(gate, again, PermissionAnswer.allow_once())
    assert len(rec.of(PermissionRequestEvent)) == 2


async def test_deny_reason_reaches_the_result(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    ctx = call_context(builtin_tool(ws, "write_file"), {"path": "a.txt", "content": "x"})
    result = await ask_and_answer(gate, ctx, PermissionAnswer.deny("use edit_file instead"))
    assert result.block and result.reason == "Permission denied by the user: use edit_file instead"
    decision = rec.of(PermissionDecisionEvent)[0]
    assert (decision.decision, decision.reason) == ("deny", result.reason)


async def test_allow_always_tool_is_remembered_for_the_session(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    tool = builtin_tool(ws, "write_file")
    await ask_and_answer(
        gate, call_context(tool, {"path": "a", "content": ""}), PermissionAnswer.always_tool()
    )
    assert await gate(call_context(tool, {"path": "b/c", "content": ""}, "c2")) is None
    first, second = rec.of(PermissionDecisionEvent)
    assert (first.scope, first.decided_by, first.rule_source) == ("always_tool", "user", "session")
    assert (second.decided_by, second.rule, second.rule_source) == (
        "session",
        "write_file",
        "session",
    )
    assert len(rec.of(PermissionRequestEvent)) == 1
    assert not (ws / ".workbench" / "rules.toml").exists()  # not saved


async def test_allow_always_pattern_saved_to_the_rules_file(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    tool = builtin_tool(ws, "run_command")
    answer = PermissionAnswer.always_pattern(save=True)  # the suggestion: pytest tests *
    await ask_and_answer(gate, call_context(tool, {"command": "pytest tests -q"}), answer)
    decision = rec.of(PermissionDecisionEvent)[0]
    assert decision.scope == "always_pattern"
    assert decision.rule == 'run_command(command="pytest tests *")'
    assert decision.rule_source == ".workbench/rules.toml:2"
    # a fresh gate (next session) loads it; a command outside the pattern still asks
    rec2 = Recorder()
    fresh = gate_for(ws, rec2)
    assert await fresh(call_context(tool, {"command": "pytest tests -x"})) is None
    assert fresh.rules.match("run_command", {"command": "pytest -q"}).action == "ask"  # type: ignore[union-attr]
    assert rec2.of(PermissionDecisionEvent)[0].rule_source == ".workbench/rules.toml:2"
    assert fresh.rules.match("run_command", {"command": "rm -rf /"}).action == "ask"  # type: ignore[union-attr]


async def test_bad_always_patterns_are_refused_and_stay_pending(ws: Path) -> None:
    gate = gate_for(ws, Recorder())
    ctx = call_context(builtin_tool(ws, "run_command"), {"command": "make test"})
    async with anyio.create_task_group() as tg:
        out: list[Any] = []

        async def hook() -> None:
            out.append(await gate(ctx, None))

        tg.start_soon(hook)
        while not gate.pending:
            await anyio.sleep(0.001)
        rid = gate.pending[0].request_id
        with pytest.raises(AnswerError, match="does not cover this call"):
            gate.decide(rid, PermissionAnswer.always_pattern('run_command(command="pytest *")'))
        with pytest.raises(AnswerError, match="Cannot read pattern"):
            gate.decide(rid, PermissionAnswer.always_pattern("run_command(("))
        with pytest.raises(AnswerError, match="No pending permission request 'nope'"):
            gate.decide("nope", PermissionAnswer.allow_once())
        assert [p.request_id for p in gate.pending] == [rid]
        gate.decide(rid, PermissionAnswer.always_pattern('run_command(command="make *")'))
    assert out == [None]
    with pytest.raises(AnswerError, match="answered or aborted"):
        gate.decide(rid, PermissionAnswer.allow_once())


async def test_edited_arguments_are_revalidated(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    tool = builtin_tool(ws, "edit_file")
    ctx = call_context(tool, {"path": "src/app.py", "edits": [{"old_text": "x", "new_text": "y"}]})
    out: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def hook() -> None:
            out.append(await gate(ctx, None))

        tg.start_soon(hook)
        while not gate.pending:
            await anyio.sleep(0.001)
        rid = gate.pending[0].request_id
        with pytest.raises(AnswerError) as bad:
            gate.decide(
                rid, PermissionAnswer.edit({"path": "src/app.py", "edits": [{"old_text": ""}]})
            )
        assert str(bad.value).startswith('Validation failed for tool "edit_file":')
        assert "edits[0].old_text: String should have at least 1 character" in str(bad.value)
        assert "edits[0].new_text: Field required" in str(bad.value)
        assert gate.pending and gate.pending[0].request_id == rid  # still waiting
        # the flat form is folded by prepare_arguments, as for the model's own arguments
        gate.decide(
            rid,
            PermissionAnswer.edit({"path": "src/app.py", "old_text": "x = 1", "new_text": "x = 2"}),
        )
    assert out == [None]
    assert ctx.args.model_dump() == {
        "path": "src/app.py",
        "edits": [{"old_text": "x = 1", "new_text": "x = 2"}],
    }
    decision = rec.of(PermissionDecisionEvent)[0]
    assert decision.edited_args == ctx.args.model_dump(mode="json")


async def test_abort_while_waiting_ends_the_wait_at_once(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    controller = AbortController()
    out: list[Any] = []
    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:

            async def hook() -> None:
                ctx = call_context(builtin_tool(ws, "run_command"), {"command": "ls"})
                out.append(await gate(ctx, controller.signal))

            tg.start_soon(hook)
            while not gate.pending:
                await anyio.sleep(0.001)
            started = time.monotonic()
            controller.abort()
    assert time.monotonic() - started < 0.2
    assert out[0].block and out[0].reason == "Operation aborted while waiting for permission"
    assert gate.pending == []
    decision = rec.of(PermissionDecisionEvent)[0]
    assert (decision.decision, decision.decided_by) == ("deny", "abort")


async def test_several_pending_and_always_settles_the_covered_ones(ws: Path) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec)
    write, run = builtin_tool(ws, "write_file"), builtin_tool(ws, "run_command")
    ctxs = [
        call_context(write, {"path": "a.txt", "content": ""}, "w1"),
        call_context(run, {"command": "ls"}, "r1"),
        call_context(write, {"path": "b.txt", "content": ""}, "w2"),
    ]
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        for ctx in ctxs:

            async def hook(ctx: BeforeToolCallContext = ctx) -> None:
                results[ctx.tool_call.id] = await gate(ctx, None)

            tg.start_soon(hook)
        while len(gate.pending) < 3:
            await anyio.sleep(0.001)
        assert sorted(p.tool_call_id for p in gate.pending) == ["r1", "w1", "w2"]
        w1 = next(p for p in gate.pending if p.tool_call_id == "w1")
        gate.decide(w1.request_id, PermissionAnswer.always_tool())
        await anyio.sleep(0.01)
        assert [p.tool_call_id for p in gate.pending] == ["r1"]  # w2 settled by the new rule
        gate.decide(gate.pending[0].request_id, PermissionAnswer.deny())
    assert results["w1"] is None and results["w2"] is None and results["r1"].block
    by_call = {d.tool_call_id: d for d in rec.of(PermissionDecisionEvent)}
    assert by_call["w2"].decided_by == "session" and by_call["w2"].rule == "write_file"
    assert by_call["w1"].decided_by == "user" and by_call["r1"].decision == "deny"


@pytest.mark.parametrize(
    ("policy", "allowed", "words"),
    [("all", True, None), ("none", False, "no person approved it"), ("rules", False, "no allow")],
)
async def test_headless_policies(ws: Path, policy: str, allowed: bool, words: str | None) -> None:
    rec = Recorder()
    gate = gate_for(ws, rec, policy=policy, deny=['run_command(command="rm *")'])
    result = await gate(call_context(builtin_tool(ws, "run_command"), {"command": "ls"}))
    assert (result is None) is allowed
    if words:
        assert words in result.reason and "run_command (default)" in result.reason
        assert "--approve" not in result.reason  # what was denied and why, not the mode
    decision = rec.of(PermissionDecisionEvent)[0]
    assert (decision.decided_by, decision.rule_source) == ("policy", f"--approve {policy}")
    assert not rec.of(PermissionRequestEvent)
    # a deny rule denies under every policy, "all" included
    denied = await gate(call_context(builtin_tool(ws, "run_command"), {"command": "rm -rf x"}))
    assert denied is not None and denied.block and "--deny" in denied.reason
    if words:  # with no rule at all, the reason says so
        bare = PermissionGate(RuleSet(), policy=policy)  # type: ignore[arg-type]
        mystery = AgentTool("mystery", "Mystery", "d", _NoArgs, _never_runs)
        unnamed = await bare(call_context(mystery, {}))
        assert unnamed is not None and "mystery needs approval (no rule); no allow" in (
            unnamed.reason
        )


async def test_rules_policy_still_allows_allow_rules(ws: Path) -> None:
    gate = PermissionGate(load_rules(ws, allow=["write_file"]), policy="rules")
    assert (
        await gate(call_context(builtin_tool(ws, "write_file"), {"path": "a", "content": ""}))
        is None
    )


async def test_saving_without_a_rules_file_is_refused(ws: Path) -> None:
    gate = PermissionGate(RuleSet(default_rules() + rules_from_flags()), publish=Recorder())
    ctx = call_context(builtin_tool(ws, "write_file"), {"path": "a", "content": ""})
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate, ctx, None)
        while not gate.pending:
            await anyio.sleep(0.001)
        rid = gate.pending[0].request_id
        with pytest.raises(AnswerError, match="No rules file"):
            gate.decide(rid, PermissionAnswer.always_tool(save=True))
        assert len(gate.rules) == len(default_rules())  # nothing was added
        gate.decide(rid, PermissionAnswer.allow_once())


# -- through the real loop -----------------------------------------------------------


def scripted_agent(ws: Path, turns: list[dict[str, Any]]) -> Agent:
    provider = ScriptedProvider(Scenario.model_validate({"name": "t", "turns": turns}))
    return Agent(stream_fn=provider, model=provider.model, tools=builtin_tools(ws))


def answer_with(
    agent: Agent, gate: PermissionGate, choose: Callable[[Any], PermissionAnswer]
) -> None:
    async def on_event(event: Any, _signal: Any) -> None:
        if isinstance(event, PermissionRequestEvent):
            gate.decide(event.request_id, choose(event))

    agent.subscribe(on_event)


def results(agent: Agent) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}


PARALLEL_WRITES = [
    {
        "tool_calls": [
            {"id": "w1", "name": "write_file", "arguments": {"path": "one.txt", "content": "1"}},
            {"id": "r1", "name": "read_file", "arguments": {"path": "config.json"}},
            {"id": "w2", "name": "write_file", "arguments": {"path": "two.txt", "content": "2"}},
            {
                "id": "e1",
                "name": "edit_file",
                "arguments": {"path": "src/app.py", "old_text": "x = 1", "new_text": "x = 2"},
            },
        ]
    },
    {"text": "done"},
]


async def test_loop_parallel_batch_with_mixed_answers(ws: Path) -> None:
    agent = scripted_agent(ws, PARALLEL_WRITES)
    gate = PermissionGate.for_workspace(ws, publish=agent.publish)
    agent.before_tool_call = gate
    events: list[Any] = []
    agent.subscribe(lambda e, _s: events.append(e))
    answers = {
        "w1": PermissionAnswer.allow_once(),
        "w2": PermissionAnswer.deny("not two"),
        "e1": PermissionAnswer.edit(
            {"path": "src/app.py", "edits": [{"old_text": "x = 1", "new_text": "x = 3"}]}
        ),
    }
    answer_with(agent, gate, lambda e: answers[e.tool_call_id])
    await agent.prompt("go")
    out = results(agent)
    assert (ws / "one.txt").read_text() == "1"
    assert not (ws / "two.txt").exists()
    assert out["w2"].is_error and out["w2"].text == "Permission denied by the user: not two"
    assert (ws / "src" / "app.py").read_text() == "x = 3\n"  # the edited arguments ran
    assert not out["r1"].is_error and not out["e1"].is_error
    kinds = [
        (e.type, getattr(e, "tool_call_id", None))
        for e in events
        if e.type in ("permission_request", "permission_decision")
    ]
    assert kinds == [
        ("permission_request", "w1"),
        ("permission_decision", "w1"),
        ("permission_decision", "r1"),
        ("permission_request", "w2"),
        ("permission_decision", "w2"),
        ("permission_request", "e1"),
        ("permission_decision", "e1"),
    ]


async def test_loop_abort_while_waiting_ends_the_run_cleanly(ws: Path) -> None:
    agent = scripted_agent(ws, PARALLEL_WRITES)
    gate = PermissionGate.for_workspace(ws, publish=agent.publish)
    agent.before_tool_call = gate
    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "go")
            while not gate.pending:
                await anyio.sleep(0.001)
            agent.abort()
    out = results(agent)
    assert list(out) == ["w1", "r1", "w2", "e1"]  # every call answered, in order
    assert all(m.is_error for m in out.values())
    assert out["w1"].text.startswith("Operation aborted")
    assert not (ws / "one.txt").exists() and gate.pending == []
    last = agent.state.messages[-1]
    assert isinstance(last, ToolResultMessage) or last.stop_reason == "aborted"
