"""The stepper through the real loop (scripted model, built-in tools) and in isolation."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from workbench.agent import (
    AfterToolCallContext,
    AfterToolCallResult,
    Agent,
    AgentContext,
    AgentToolResult,
    AssistantMessage,
    TextContent,
    ToolArgumentsEvent,
    ToolCall,
    ToolExecutionEndEvent,
    ToolResultMessage,
)
from workbench.bus_events import StepModeEvent, StepPausedEvent, StepResumedEvent
from workbench.permissions import PermissionGate, chain_after, chain_before
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.stepper import Breakpoint, Resume, Stepper, StepperError
from workbench.tools import builtin_tools

TWO_TOOLS: list[dict[str, Any]] = [
    {
        "tool_calls": [
            {"id": "r1", "name": "read_file", "arguments": {"path": "config.json"}},
            {"id": "w1", "name": "write_file", "arguments": {"path": "src/a.txt", "content": "A"}},
        ]
    },
    {
        "tool_calls": [
            {"id": "w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "B"}}
        ]
    },
    {"text": "done"},
]

Choose = Callable[[StepPausedEvent], Resume | str]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "config.json").write_text('{"model": "m"}\n')
    return tmp_path


class Rig:
    """An Agent wired with a stepper (and optionally a gate) plus a scripted driver."""

    def __init__(
        self, ws: Path, turns: list[dict[str, Any]], *, gate: bool = False, **stepper: Any
    ) -> None:
        provider = ScriptedProvider(Scenario.model_validate({"name": "t", "turns": turns}))
        self.stepper = Stepper(**stepper)
        self.agent = Agent(
            stream_fn=self.stepper.wrap_stream_fn(provider),
            model=provider.model,
            tools=builtin_tools(ws),
        )
        self.stepper.publish = self.agent.publish
        self.gate = PermissionGate.for_workspace(ws, publish=self.agent.publish, policy="all")
        hooks = (self.gate,) if gate else ()
        self.agent.before_tool_call = chain_before(*hooks, self.stepper.before_tool_call)
        self.stepper.attach(self.agent)
        self.events: list[Any] = []
        self.errors: list[str] = []
        self.choices: list[Choose] = []
        self.agent.subscribe(self._on_event)

    def drive(self, *choices: Choose | str) -> None:
        """Answer pauses in turn; the last choice repeats."""
        self.choices = [c if callable(c) else (lambda _e, c=c: c) for c in choices]

    async def _on_event(self, event: Any, _signal: Any) -> None:
        self.events.append(event)
        if isinstance(event, StepPausedEvent) and self.choices:
            choose = self.choices.pop(0) if len(self.choices) > 1 else self.choices[0]
            self.stepper.resume(event.pause_id, choose(event))  # type: ignore[arg-type]

    def pauses(self) -> list[tuple[str, str | None]]:
        return [(e.point, e.tool_name) for e in self.events if isinstance(e, StepPausedEvent)]

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def results(self) -> dict[str, ToolResultMessage]:
        return {
            m.tool_call_id: m for m in self.agent.state.messages if isinstance(m, ToolResultMessage)
        }


# -- pause points --------------------------------------------------------------------


async def test_step_mode_pauses_before_every_request_and_every_tool(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, enabled=True)
    rig.drive("step")
    await rig.agent.prompt("go")
    assert rig.pauses() == [
        ("before_model", None),
        ("before_tool", "read_file"),
        ("before_tool", "write_file"),
        ("before_model", None),
        ("before_tool", "write_file"),
        ("before_model", None),
    ]
    resumed = rig.of(StepResumedEvent)
    assert [r.action for r in resumed] == ["step"] * 6
    assert [r.pause_id for r in resumed] == [p.pause_id for p in rig.of(StepPausedEvent)]
    paused = rig.of(StepPausedEvent)[1]
    assert (paused.tool_call_id, paused.args, paused.breakpoint) == (
        "r1",
        {"path": "config.json", "offset": None, "limit": None},
        None,
    )
    assert (ws / "b.txt").read_text() == "B" and rig.stepper.paused is None


async def test_pauses_hold_the_run_until_resumed(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, enabled=True)
    seen: list[str] = []
    with anyio.fail_after(5):
        await _step_three_times(rig, seen, ws)
    assert seen == ["before_model:None", "before_tool:read_file", "before_tool:write_file"]
    assert all(r.waited_ms >= 25 for r in rig.of(StepResumedEvent))


async def _step_three_times(rig: Rig, seen: list[str], ws: Path) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(rig.agent.prompt, "go")
        for _ in range(3):
            while rig.stepper.paused is None:
                await anyio.sleep(0.001)
            pause = rig.stepper.paused
            seen.append(f"{pause.point}:{pause.tool_name}")
            await anyio.sleep(0.03)
            assert rig.stepper.paused is pause  # nothing moved while paused
            assert not (ws / "src" / "a.txt").exists()
            rig.stepper.resume(pause.pause_id, "step" if len(seen) < 3 else "run_to_end")
            await anyio.sleep(0.005)


async def test_continue_turns_step_mode_off_and_keeps_breakpoints(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, enabled=True, breakpoints=['write_file(path="b*")'])
    rig.drive("continue", "step", "continue")
    await rig.agent.prompt("go")
    assert rig.pauses() == [
        ("before_model", None),
        ("before_tool", "write_file"),  # the breakpoint
        ("before_model", None),  # "step" there turned step mode back on
    ]
    assert rig.of(StepPausedEvent)[1].breakpoint == 'write_file(path="b*")'
    modes = [(m.enabled, m.breakpoints) for m in rig.of(StepModeEvent)]
    bp = ['write_file(path="b*")']
    # the mode it started in is announced with the run (so a session records it)
    assert modes == [(True, bp), (False, bp), (True, bp), (False, bp)]


async def test_breakpoints_pause_only_matching_calls(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, breakpoints=['write_file(path="src/**")'])
    rig.drive("continue")
    await rig.agent.prompt("go")
    assert rig.pauses() == [("before_tool", "write_file")]
    assert rig.of(StepPausedEvent)[0].tool_call_id == "w1"


async def test_step_from_a_breakpoint_steps_on_from_there(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, breakpoints=["read_file"])
    rig.drive("step", "step", "continue")
    await rig.agent.prompt("go")
    assert rig.pauses() == [
        ("before_tool", "read_file"),
        ("before_tool", "write_file"),
        ("before_model", None),
    ]
    assert [m.enabled for m in rig.of(StepModeEvent)] == [False, True, False]  # announced first


async def test_run_to_end_skips_every_pause_for_this_run_only(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS + TWO_TOOLS, enabled=True, breakpoints=["@error", "write_file"])
    rig.drive("step", "run_to_end")
    await rig.agent.prompt("go")
    assert rig.pauses() == [("before_model", None), ("before_tool", "read_file")]
    modes = [(m.enabled, m.run_to_end) for m in rig.of(StepModeEvent)]
    # announced with the run, set, then cleared at agent_end
    assert modes == [(True, False), (True, True), (True, False)]
    assert not rig.stepper.run_to_end
    rig.events.clear()
    rig.drive("continue")
    await rig.agent.prompt("again")
    assert rig.pauses()[0] == ("before_model", None)  # the next run pauses again


# -- edit and inject -----------------------------------------------------------------


async def test_edit_at_a_pause_is_revalidated_and_runs(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, breakpoints=['write_file(path="src/**")'])

    def edit(event: StepPausedEvent) -> Resume:
        try:
            rig.stepper.resume(event.pause_id, Resume.edit({"path": "src/a.txt", "content": 5}))
        except StepperError as exc:
            rig.errors.append(str(exc))
        assert rig.stepper.paused is not None  # still paused after the refused edit
        return Resume.edit({"path": "src/edited.txt", "content": "E"})

    rig.drive(edit, "continue")
    await rig.agent.prompt("go")
    assert rig.errors and rig.errors[0].startswith('Validation failed for tool "write_file":')
    assert "content: Input should be a valid string" in rig.errors[0]
    assert (ws / "src" / "edited.txt").read_text() == "E"
    assert not (ws / "src" / "a.txt").exists()
    resumed = rig.of(StepResumedEvent)[0]
    assert resumed.action == "edit"
    assert resumed.edited_args == {"path": "src/edited.txt", "content": "E"}


async def test_inject_answers_the_call_without_running_it(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, breakpoints=["write_file"])
    rig.drive(Resume.inject("pretend it was written", is_error=True), "continue")
    await rig.agent.prompt("go")
    assert not (ws / "src" / "a.txt").exists()
    out = rig.results()["w1"]
    assert out.injected and out.is_error and out.text == "pretend it was written"
    end = next(e for e in rig.of(ToolExecutionEndEvent) if e.tool_call_id == "w1")
    assert end.injected and end.is_error
    resumed = rig.of(StepResumedEvent)[0]
    assert resumed.injected_result is not None and resumed.injected_is_error
    assert (ws / "b.txt").read_text() == "B"  # the second pause continued normally
    assert not rig.results()["r1"].injected


MISSING = [
    {
        "tool_calls": [
            {"id": "m1", "name": "read_file", "arguments": {"path": "docs/setup.md"}},
            {"id": "r1", "name": "read_file", "arguments": {"path": "config.json"}},
        ]
    },
    {"text": "done"},
]


async def test_error_breakpoint_pauses_after_the_call_and_can_replace_the_result(
    ws: Path,
) -> None:
    rig = Rig(ws, MISSING, breakpoints=["@error"])
    rig.drive(Resume.inject("# Setup\nnothing to do\n"))
    await rig.agent.prompt("go")
    assert rig.pauses() == [("after_tool", "read_file")]
    paused = rig.of(StepPausedEvent)[0]
    assert (paused.tool_call_id, paused.breakpoint) == ("m1", "@error")
    out = rig.results()["m1"]
    assert out.injected and not out.is_error and out.text == "# Setup\nnothing to do\n"


async def test_error_breakpoint_step_leaves_the_error(ws: Path) -> None:
    rig = Rig(ws, MISSING, breakpoints=["@error"])
    rig.drive("continue")
    await rig.agent.prompt("go")
    out = rig.results()["m1"]
    assert out.is_error and not out.injected and out.text == "File not found: docs/setup.md"
    assert rig.pauses() == [("after_tool", "read_file")]  # the good call did not pause


INVALID = [
    {
        "tool_calls": [
            {"id": "e1", "name": "edit_file", "arguments": {"path": "config.json", "edits": "x"}}
        ]
    },
    {"text": "done"},
]


async def test_invalid_breakpoint_edit_runs_the_pipeline_again_on_the_edit(ws: Path) -> None:
    rig = Rig(ws, INVALID, breakpoints=["@invalid"])
    good = {"path": "config.json", "edits": [{"old_text": '"m"', "new_text": '"n"'}]}

    def try_edit(event: StepPausedEvent) -> Resume:
        try:
            rig.stepper.resume(event.pause_id, Resume.edit({"path": "config.json", "edits": []}))
        except StepperError as exc:
            rig.errors.append(str(exc))
        assert rig.stepper.paused is not None  # a refused edit leaves the pause
        return Resume.edit(good)

    rig.drive(try_edit, "continue")
    await rig.agent.prompt("go")
    paused = rig.of(StepPausedEvent)[0]
    assert (paused.point, paused.tool_call_id, paused.breakpoint, paused.failed_stage) == (
        "invalid_arguments",
        "e1",
        "@invalid",
        "validate",
    )
    assert paused.args == {"path": "config.json", "edits": "x"}
    assert len(rig.errors) == 1 and "List should have at least 1 item" in rig.errors[0]
    # The edit went through the whole pipeline again, and ran.
    arguments = [e for e in rig.of(ToolArgumentsEvent) if e.tool_call_id == "e1"]
    assert [(a.edited, a.failed_stage) for a in arguments] == [(False, "validate"), (True, None)]
    assert json.loads(arguments[1].raw or "") == good
    assert not rig.results()["e1"].is_error
    assert (ws / "config.json").read_text() == '{"model": "n"}\n'
    assert rig.of(StepResumedEvent)[0].edited_args == arguments[1].validated


BROKEN = [
    {
        "tool_calls": [
            {"id": "p1", "name": "read_file", "raw": '{"path": "config.json"'},
            {"id": "u1", "name": "read_fil", "arguments": {"path": "config.json"}},
        ]
    },
    {"text": "done"},
]


@pytest.mark.parametrize(
    ("breakpoints", "stops"),
    [
        (["@parse"], [("p1", "@parse", "parse")]),
        (["@unknown"], [("u1", "@unknown", "lookup")]),
        (["@invalid"], [("p1", "@invalid", "parse"), ("u1", "@invalid", "lookup")]),
        (["@validate"], []),
    ],
)
async def test_every_pipeline_failure_has_a_breakpoint(ws: Path, breakpoints, stops) -> None:
    rig = Rig(ws, BROKEN, breakpoints=breakpoints)
    rig.drive("continue")
    await rig.agent.prompt("go")
    assert [
        (p.tool_call_id, p.breakpoint, p.failed_stage) for p in rig.of(StepPausedEvent)
    ] == stops


async def test_an_unknown_tool_cannot_be_edited_and_malformed_json_can(ws: Path) -> None:
    rig = Rig(ws, BROKEN, breakpoints=["@invalid"])

    def edit(event: StepPausedEvent) -> Resume | str:
        if event.tool_call_id == "u1":
            try:
                rig.stepper.resume(event.pause_id, Resume.edit({"path": "config.json"}))
            except StepperError as exc:
                rig.errors.append(str(exc))
            return "continue"
        return Resume.edit({"path": "config.json"})

    rig.drive(edit)
    await rig.agent.prompt("go")
    assert rig.errors == [
        "There is no tool 'read_fil': editing its arguments cannot help (F10 or F5 send the "
        "error to the model)"
    ]
    assert not rig.results()["p1"].is_error and "model" in rig.results()["p1"].text
    assert rig.results()["u1"].is_error


async def test_error_breakpoint_stops_at_every_error_result_with_the_result(ws: Path) -> None:
    rig = Rig(ws, BROKEN, breakpoints=["@error"])
    rig.drive(Resume.inject("use read_file with a JSON object", is_error=True), "continue")
    await rig.agent.prompt("go")
    paused = rig.of(StepPausedEvent)
    assert [(p.point, p.tool_call_id) for p in paused] == [
        ("after_tool", "p1"),
        ("after_tool", "u1"),
    ]
    stopped_on = [p.result.content[0].text if p.result else None for p in paused]
    assert stopped_on[0].startswith("Invalid JSON in arguments for tool read_file")
    assert stopped_on[1] == "Tool read_fil not found"
    replaced = rig.results()["p1"]
    assert replaced.injected and replaced.text == "use read_file with a JSON object"
    assert (
        rig.results()["u1"].text == "Tool read_fil not found" and not rig.results()["u1"].injected
    )


# -- aborts --------------------------------------------------------------------------


async def test_abort_while_paused_before_a_request_ends_the_run(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, enabled=True)
    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(rig.agent.prompt, "go")
            while rig.stepper.paused is None:
                await anyio.sleep(0.001)
            started = time.monotonic()
            rig.agent.abort()
    assert time.monotonic() - started < 0.5
    last = rig.agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert [r.action for r in rig.of(StepResumedEvent)] == ["abort"]
    assert rig.events[-1].type == "agent_end" and rig.stepper.paused is None


async def test_abort_while_paused_before_a_tool_answers_every_call(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, breakpoints=["read_file"])
    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(rig.agent.prompt, "go")
            while rig.stepper.paused is None:
                await anyio.sleep(0.001)
            rig.agent.abort()
    out = rig.results()
    assert list(out) == ["r1", "w1"] and all(m.is_error for m in out.values())
    assert not (ws / "src" / "a.txt").exists()
    assert rig.events[-1].type == "agent_end"


# -- chaining with the gate ----------------------------------------------------------


async def test_a_call_the_gate_denies_never_pauses(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, gate=True, enabled=True)
    rig.gate.policy = "none"  # writes are denied, reads allowed
    rig.drive("step")
    await rig.agent.prompt("go")
    assert ("before_tool", "write_file") not in rig.pauses()
    assert ("before_tool", "read_file") in rig.pauses()
    assert rig.results()["w1"].is_error and "no person approved it" in rig.results()["w1"].text


async def test_chain_after_merges_in_order() -> None:
    seen: list[Any] = []

    def first(ctx: AfterToolCallContext, _s: Any) -> AfterToolCallResult:
        return AfterToolCallResult(content=[TextContent(text="one")], is_error=True)

    async def second(ctx: AfterToolCallContext, _s: Any) -> AfterToolCallResult:
        seen.append((ctx.result.content[0].text, ctx.is_error))  # type: ignore[union-attr]
        return AfterToolCallResult(details={"d": 1})

    call = ToolCall(id="c", name="t")
    ctx = AfterToolCallContext(
        AssistantMessage(content=[call]),
        call,
        None,  # type: ignore[arg-type]
        AgentToolResult.text("orig"),
        False,
        AgentContext(),
    )
    merged = await chain_after(first, None, second)(ctx, None)
    assert seen == [("one", True)]
    assert merged is not None and merged.details == {"d": 1} and merged.is_error is True
    assert merged.content is not None and merged.content[0].text == "one"  # type: ignore[union-attr]
    assert await chain_after(lambda c, s: None)(ctx, None) is None


# -- state and API -------------------------------------------------------------------


async def test_breakpoint_api_publishes_the_mode() -> None:
    events: list[Any] = []
    stepper = Stepper(publish=events.append)
    assert (await stepper.add_breakpoint("run_command")).text == "run_command"
    await stepper.add_breakpoint("write_file( path = 'src/**' )")
    await stepper.add_breakpoint("@error")
    await stepper.set_enabled(True)
    assert [b.text for b in stepper.breakpoints] == [
        "run_command",
        'write_file(path="src/**")',
        "@error",
    ]
    assert await stepper.remove_breakpoint("write_file(path='src/**')") is True
    assert await stepper.remove_breakpoint("nope") is False
    assert [(e.enabled, e.breakpoints) for e in events] == [
        (False, ["run_command"]),
        (False, ["run_command", 'write_file(path="src/**")']),
        (False, ["run_command", 'write_file(path="src/**")', "@error"]),
        (True, ["run_command", 'write_file(path="src/**")', "@error"]),
        (True, ["run_command", "@error"]),
    ]
    with pytest.raises(StepperError, match="Unknown breakpoint '@later'"):
        Breakpoint.parse("@later")
    with pytest.raises(StepperError, match="Cannot read pattern"):
        await stepper.add_breakpoint("write_file(path=")
    with pytest.raises(StepperError, match="No pause 'pause-x' is waiting"):
        stepper.resume("pause-x", "step")


async def test_actions_that_do_not_apply_are_refused(ws: Path) -> None:
    rig = Rig(ws, TWO_TOOLS, enabled=True)

    def bad_then_continue(event: StepPausedEvent) -> str:
        for action in (Resume.edit({}), Resume.inject("x"), Resume("inject")):
            try:
                rig.stepper.resume(event.pause_id, action)
            except StepperError as exc:
                rig.errors.append(str(exc))
        return "continue"

    rig.drive(bad_then_continue)
    await rig.agent.prompt("go")
    assert rig.errors[:2] == [
        "'edit' is not possible at a before_model pause (possible: step, continue, run_to_end)",
        "'inject' is not possible at a before_model pause (possible: step, continue, run_to_end)",
    ]
    assert (ws / "b.txt").exists()
