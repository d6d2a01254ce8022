"""Property tests: whatever the model asks for and whenever the run is aborted, every
tool call is answered exactly once, in order, and the event stream stays well formed."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import anyio
from tests.agent.helpers import (
    MODEL,
    FakeStream,
    Recorder,
    Value,
    assert_events_valid,
    assert_transcript_valid,
    assistant,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.agent import (
    AbortController,
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallResult,
    ToolCall,
    ToolCallAborts,
    ToolResultMessage,
    UserMessage,
    run_agent_loop,
)

GRACE = 0.01

KINDS = [
    "valid",  # runs and succeeds
    "updates",  # runs, sends progress updates (some after a yield)
    "raises",  # runs and raises
    "slow",  # runs for a few ms, honouring the abort signal
    "stubborn",  # runs for a few ms, ignoring the abort signal
    "sequential",  # a tool that makes its batch sequential
    "invalid",  # fails validation
    "unknown",  # no such tool
    "malformed",  # raw JSON that does not parse
    "blocked",  # before_tool_call blocks it
]
RUNS = {"valid", "updates", "raises", "slow", "stubborn", "sequential"}
"""Kinds whose execute runs, unless the call is aborted first."""


@dataclass(frozen=True)
class CallSpec:
    kind: str
    delay: float


call_specs = st.builds(CallSpec, st.sampled_from(KINDS), st.sampled_from([0.0, 0.001, 0.003]))
batches = st.lists(st.lists(call_specs, min_size=1, max_size=6), min_size=1, max_size=3)


def kind_of(call: ToolCall) -> str:
    """The kind of call a ToolCall was made from."""
    if not (call.raw_arguments or "").endswith("}"):
        return "malformed"
    value = call.arguments.get("value")
    if not isinstance(value, str):
        return "invalid"
    return "unknown" if call.name == "ghost" else value.split(":")[0]


def tool_call(call_id: str, spec: CallSpec) -> ToolCall:
    name = {
        "unknown": "ghost",
        "sequential": "seq",
        "raises": "boom",
        "slow": "slow",
        "stubborn": "slow",
    }.get(spec.kind, "work")
    args: dict[str, Any] = {"value": f"{spec.kind}:{spec.delay}"}
    if spec.kind == "invalid":
        args = {"value": 12345}
    raw = json.dumps(args)
    if spec.kind == "malformed":
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw[:-3])
    return ToolCall(id=call_id, name=name, arguments=args, raw_arguments=raw)


class World:
    """The tools, with a log of what really ran."""

    def __init__(self) -> None:
        self.executed: list[str] = []
        self.executed_aborted: list[str] = []
        self.finished: set[str] = set()

    async def execute(
        self, tool_call_id: str, params: Any, signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        self.executed.append(tool_call_id)
        if signal.aborted:
            self.executed_aborted.append(tool_call_id)
        kind, delay = params.value.split(":")
        if kind == "updates":
            on_update(AgentToolResult.text("1"))
            await anyio.sleep(0)
            on_update(AgentToolResult.text("2"))
        if kind == "raises":
            raise RuntimeError("tool failed")
        if kind == "slow":
            with anyio.move_on_after(float(delay)):
                await signal.wait()
            signal.throw_if_aborted()
        elif kind == "stubborn" or float(delay):
            await anyio.sleep(float(delay))
        self.finished.add(tool_call_id)
        return AgentToolResult.text(f"done {tool_call_id}")

    def tools(self) -> list[AgentTool]:
        def make(name: str, mode: str | None = None) -> AgentTool:
            return AgentTool(
                name=name,
                label=name,
                description=name,
                parameters=Value,
                execute=self.execute,
                execution_mode=mode,
            )  # type: ignore[arg-type]

        return [make("work"), make("boom"), make("slow"), make("seq", "sequential")]


def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
    if str(ctx.args.value).startswith("blocked"):
        return BeforeToolCallResult(block=True, reason="denied")
    return None


async def play(
    plan: list[list[CallSpec]],
    mode: str,
    abort_at: int | None = None,
    call_aborts: frozenset[int] = frozenset(),
) -> tuple[list[Any], Recorder, World, list[ToolCall], bool]:
    world = World()
    replies: list[AssistantMessage] = []
    all_calls: list[ToolCall] = []
    for turn, specs in enumerate(plan):
        calls = [tool_call(f"t{turn}_{i}", spec) for i, spec in enumerate(specs)]
        all_calls += calls
        replies.append(assistant(f"turn {turn}", *calls))
    stream = FakeStream(*replies, assistant("finished"))
    controller = AbortController()
    aborts = ToolCallAborts()
    count = 0
    started = 0

    def on_event(event: Any) -> None:
        nonlocal count, started
        count += 1
        if abort_at is not None and count == abort_at:
            controller.abort("random abort")
        if event.type == "tool_execution_start":
            if started in call_aborts:
                aborts.abort(event.tool_call_id)
            started += 1

    rec = Recorder(on_event)
    config = AgentLoopConfig(
        model=MODEL,
        tool_execution=mode,  # type: ignore[arg-type]
        before_tool_call=before,
        tool_abort_grace=GRACE,
        tool_call_aborts=aborts,
    )
    context = AgentContext(messages=[], tools=world.tools())
    with anyio.fail_after(10):
        messages = await run_agent_loop(
            [UserMessage(content="go")], context, config, rec, controller.signal, stream
        )
    return messages, rec, world, all_calls, controller.signal.aborted


def check(messages: list[Any], rec: Recorder, world: World, calls: list[ToolCall]) -> None:
    assert_transcript_valid(messages)
    assert_events_valid(rec.events)
    assert rec.events[-1].messages == messages
    # every call the model made (in the replies that were played) is answered once
    asked = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(asked) == sorted(answered) and len(set(answered)) == len(answered)
    assert rec.result_message_ids() == answered
    assert sorted(rec.ids("tool_execution_start")) == sorted(asked)
    # execute ran only for found, valid, allowed calls, never with an aborted signal
    by_id = {c.id: c for c in calls}
    for call_id in world.executed:
        kind = kind_of(by_id[call_id])
        assert kind in RUNS, (call_id, kind)
    assert world.executed_aborted == []
    assert len(set(world.executed)) == len(world.executed)
    # a finished call's result is its own, unless it was aborted
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    for call_id in world.finished:
        if not results[call_id].is_error:
            assert results[call_id].content[0].text == f"done {call_id}"


PROFILE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROFILE
@given(plan=batches, mode=st.sampled_from(["parallel", "sequential"]))
def test_without_abort_every_eligible_call_runs_and_every_call_is_answered(
    plan: list[list[CallSpec]], mode: str
) -> None:
    messages, rec, world, calls, _ = asyncio.run(play(plan, mode))
    check(messages, rec, world, calls)
    eligible = {c.id for c in calls if kind_of(c) in RUNS}
    assert set(world.executed) == eligible
    assert messages[-1].text == "finished"
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    for c in calls:
        kind = kind_of(c)
        assert results[c.id].is_error == (
            kind not in {"valid", "updates", "slow", "stubborn", "sequential"}
        ), (c, kind)
    # scheduling: a batch with a sequential tool (or the sequential config) never overlaps
    for turn in range(len(plan)):
        ids = [f"t{turn}_{i}" for i in range(len(plan[turn]))]
        sequential = mode == "sequential" or any(s.kind == "sequential" for s in plan[turn])
        positions = [
            (e.type, e.tool_call_id) for e in rec.events if getattr(e, "tool_call_id", None) in ids
        ]
        if sequential:
            order = [
                cid
                for kind, cid in positions
                if kind in ("tool_execution_start", "tool_execution_end")
            ]
            assert order == [cid for cid in ids for _ in range(2)]


@PROFILE
@given(
    plan=batches,
    mode=st.sampled_from(["parallel", "sequential"]),
    abort_at=st.integers(min_value=1, max_value=80),
)
def test_abort_at_any_moment_leaves_a_valid_transcript(
    plan: list[list[CallSpec]], mode: str, abort_at: int
) -> None:
    messages, rec, world, calls, aborted = asyncio.run(play(plan, mode, abort_at=abort_at))
    check(messages, rec, world, calls)
    last = [m for m in messages if isinstance(m, AssistantMessage)][-1]
    if aborted:
        # the run ends on the next request's aborted reply, unless the final reply was
        # already streaming (or done) when the abort came
        assert last.stop_reason == "aborted" or last.text == "finished"
    else:
        assert last.text == "finished"


@PROFILE
@given(
    plan=batches,
    mode=st.sampled_from(["parallel", "sequential"]),
    call_aborts=st.frozensets(st.integers(min_value=0, max_value=12), max_size=4),
)
def test_aborting_single_calls_never_breaks_the_run(
    plan: list[list[CallSpec]], mode: str, call_aborts: frozenset[int]
) -> None:
    messages, rec, world, calls, aborted = asyncio.run(play(plan, mode, call_aborts=call_aborts))
    assert not aborted
    check(messages, rec, world, calls)
    # the run itself goes on to the final reply
    assert messages[-1].text == "finished"
    aborted_ids = {
        rec.ids("tool_execution_start")[i]
        for i in call_aborts
        if i < len(rec.ids("tool_execution_start"))
    }
    assert not (aborted_ids & set(world.executed))  # aborted at their start: never executed
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    assert all(results[i].is_error for i in aborted_ids)
