"""An ACP agent under the workbench's loop: turns, calls, the gate's answers, cancel."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp.helpers import Fake, ask_call
from workbench.acp import AcpError
from workbench.bus_events import PermissionRequestEvent
from workbench.permissions.answers import PermissionAnswer
from workbench.proctree import running
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(60)


class Bus:
    """Every event of a run, and a wait for the first of a kind."""

    def __init__(self, run: Any) -> None:
        self.events: list[Any] = []
        self._wanted: dict[str, anyio.Event] = {}
        run.agent.subscribe(self)

    def __call__(self, event: Any, _signal: Any = None) -> None:
        self.events.append(event)
        wanted = self._wanted.get(event.type)
        if wanted is not None:
            wanted.set()

    async def first(self, kind: str) -> Any:
        if not any(e.type == kind for e in self.events):
            event = self._wanted.setdefault(kind, anyio.Event())
            with anyio.fail_after(20):
                await event.wait()
        return next(e for e in self.events if e.type == kind)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def selected(fake: Fake) -> list[Any]:
    """The outcomes the client sent for the agent's permission requests."""
    return [
        m["result"]["outcome"]
        for m in fake.answers()
        if isinstance(m.get("result"), dict) and "outcome" in m["result"]
    ]


async def test_a_rule_allows_and_the_agent_is_told_allow_once(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"think": "hm"}, {"say": "Listing."}, *ask_call(), {"say": "Done."}]])
    run = fake.run(allow=['Bash(command="ls *")'], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("list the files")
    assert selected(fake) == [{"outcome": "selected", "optionId": "allow-once"}]
    state = fold(bus.events)
    call = state.calls["c1"]
    assert (call.name, call.status, call.result_text) == ("Bash", "done", "a.txt")
    assert call.parsed == {"command": "ls -la"}
    decision = bus.of("permission_decision")[0]
    assert (decision.decision, decision.decided_by) == ("allow", "rule")
    texts = [i.text for i in state.items if i.kind == "assistant"]
    assert texts == ["Listing.", "Done."]
    labels = [label for _t, label, _d in call.events]
    assert "agent: in_progress" in labels and "agent: completed" in labels
    prompt = fake.sent("session/prompt")[0]["params"]["prompt"]
    assert prompt == [{"type": "text", "text": "list the files"}]
    new = fake.sent("session/new")[0]["params"]
    assert new["cwd"] == str(fake.workspace)


async def test_no_rule_headless_rejects_and_the_call_fails(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[*ask_call()]])
    run = fake.run(approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("go")
    assert selected(fake) == [{"outcome": "selected", "optionId": "reject-once"}]
    state = fold(bus.events)
    assert state.calls["c1"].status == "denied"
    assert "no allow rule covers this call" in state.calls["c1"].result_text


async def test_a_person_answers_always_the_agent_still_gets_once(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[*ask_call()], [*ask_call("c2", "ls -l")]])
    run = fake.run(approve="ask")
    bus = Bus(run)
    gate = run.runtime.gate
    assert gate is not None
    async with run.connected():
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.agent.prompt, "first")
            request = await bus.first("permission_request")
            assert isinstance(request, PermissionRequestEvent)
            assert (request.tool_name, request.args) == ("Bash", {"command": "ls -la"})
            gate.decide(request.request_id, PermissionAnswer(kind="allow_always_tool"))
        await run.agent.prompt("second")  # the agent asks again: the gate's rule answers
    assert selected(fake) == [{"outcome": "selected", "optionId": "allow-once"}] * 2
    decisions = bus.of("permission_decision")
    assert [(d.decided_by, d.scope) for d in decisions] == [
        ("user", "always_tool"),
        ("session", "once"),
    ]


async def test_a_person_denies_with_a_reason(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[*ask_call()]])
    run = fake.run(approve="ask")
    bus = Bus(run)
    gate = run.runtime.gate
    assert gate is not None
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "go")
        request = await bus.first("permission_request")
        gate.decide(request.request_id, PermissionAnswer(kind="deny", reason="not now"))
    assert selected(fake) == [{"outcome": "selected", "optionId": "reject-once"}]
    record = fold(bus.events).calls["c1"]
    assert record.status == "denied"
    assert "not now" in record.result_text


async def test_cancel_while_a_permission_request_waits(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[*ask_call()]])
    run = fake.run(approve="ask")
    bus = Bus(run)
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "go")
        await bus.first("permission_request")
        run.agent.abort("Cancelled by the user (ctrl+c)")
        await fake.until(lambda: selected(fake) and fake.sent("session/cancel"))
    assert selected(fake) == [{"outcome": "cancelled"}]
    assert len(fake.sent("session/cancel")) == 1
    last = run.agent.state.messages[-1]
    assert getattr(last, "stop_reason", None) == "aborted"
    decision = bus.of("permission_decision")[0]
    assert decision.decided_by == "abort"


async def test_cancel_mid_prompt_ends_the_run_cleanly(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"say": "working"}, {"hang": True}], [{"say": "again"}]])
    run = fake.run()
    bus = Bus(run)
    async with run.connected():
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.agent.prompt, "go")
            await bus.first("message_update")
            run.agent.abort("ctrl+c")
        assert len(fake.sent("session/cancel")) == 1
        assert run.agent.state.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]
        await run.agent.prompt("next")  # the session goes on with the next prompt
    assert run.agent.state.messages[-1].text == "again"  # type: ignore[union-attr]


async def test_a_call_the_agent_runs_without_asking_says_so(tmp_path: Path) -> None:
    read = {
        "toolCallId": "r1",
        "title": "Read notes.txt",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": "notes.txt", "line": 3}],
    }
    fake = Fake(
        tmp_path,
        [
            [
                {"call": read},
                {"update": {"toolCallId": "r1", "status": "in_progress"}},
                {
                    "update": {
                        "toolCallId": "r1",
                        "status": "completed",
                        "content": [
                            {
                                "type": "diff",
                                "path": "notes.txt",
                                "oldText": "a\n",
                                "newText": "b\n",
                            }
                        ],
                    }
                },
            ]
        ],
    )
    run = fake.run(deny=["read"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("go")
    record = fold(bus.events).calls["r1"]
    assert record.name == "read" and record.status == "done"
    assert record.raw is None  # the agent never reported its raw input
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent: raw input"] == "not reported"
    assert history["agent: locations"] == "notes.txt:3"
    assert "without asking" in history["not asked"]
    assert "would have denied it" in history["not asked"]
    assert record.result_text.splitlines() == [
        "--- a/notes.txt",
        "+++ b/notes.txt",
        "@@ -1 +1 @@",
        "-a",
        "+b",
    ]


async def test_plan_mode_and_commands_are_notices(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path,
        [
            [
                {"plan": [{"content": "read", "status": "completed", "priority": "high"}]},
                {"commands": [{"name": "review", "description": "Review"}]},
                {"say": "ok"},
            ]
        ],
    )
    run = fake.run(mode="plan")
    bus = Bus(run)
    async with run.connected():
        assert run.mode == "plan"
        await run.agent.prompt("go")
    notices = [i.text for i in fold(bus.events).items if i.kind == "notice"]
    assert notices[0].startswith("ACP agent fake-agent 1.0: session fake-session-1")
    assert "mode set to plan" in notices
    assert "plan:\n✓ read  (high)" in notices
    assert "slash commands: /review" in notices
    assert fake.sent("session/set_mode")[0]["params"]["modeId"] == "plan"


async def test_an_agent_that_does_not_start_is_a_clear_error(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [])
    run = fake.run(command=["/nonexistent/agent-binary"])
    with pytest.raises(AcpError, match="cannot start /nonexistent/agent-binary"):
        async with run.connected():
            pass
    crashing = fake.run(command=[*fake.command()[:2], str(tmp_path / "missing.json")])
    with pytest.raises(AcpError, match="its stderr"):
        async with crashing.connected():
            pass


async def test_the_agents_process_tree_ends_with_the_run(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"spawn": ["sleep", "60"]}]])
    run = fake.run()
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("go")
        text = bus.of("message_end")[-1].message.text
        pid = json.loads(text)["pid"]
        assert running(pid)
    assert not running(pid)


async def test_a_request_after_the_call_ran_is_answered_by_the_rules(tmp_path: Path) -> None:
    from workbench.acp.permission import PermissionAsk, answer_late

    options = [
        {"optionId": "yes", "kind": "allow_once"},
        {"optionId": "no", "kind": "reject_once"},
    ]
    run = Fake(tmp_path, []).run(approve="ask", deny=['Bash(command="rm *")'], allow=["Bash"])
    bus = Bus(run)
    answers = []
    for command in ("rm -rf x", "ls"):
        call = run.report(
            {
                "toolCallId": command,
                "rawInput": {"command": command},
                "_meta": {"x": {"toolName": "Bash"}},
            },
            new=True,
        )
        await run.opened(call)
        ask = PermissionAsk(call, options)
        await answer_late(run, ask)
        answers.append(ask.answer.result())
    assert answers == [
        {"outcome": "selected", "optionId": "no"},
        {"outcome": "selected", "optionId": "yes"},
    ]
    notes = [e.detail for e in bus.of("acp_call_update") if e.label == "asked after it ran"]
    assert notes == ["answered by the rules alone: deny", "answered by the rules alone: allow"]


async def test_an_agent_that_dies_mid_prompt_ends_the_run_with_an_error(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"say": "working"}, *ask_call()[:1], {"exit": 3}]])
    run = fake.run(approve="all")
    bus = Bus(run)
    async with run.connected():
        with anyio.fail_after(20):
            await run.agent.prompt("go")
    last = run.agent.state.messages[-1]
    assert last.stop_reason == "error"  # type: ignore[union-attr]
    assert "The agent failed the prompt" in (last.error_message or "")  # type: ignore[union-attr]
    assert fold(bus.events).run_state in ("error", "finished")


async def test_a_line_that_is_not_json_is_skipped(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"garbage": "this is not json {"}, {"say": "still fine"}]])
    run = fake.run()
    async with run.connected():
        with anyio.fail_after(20):
            await run.agent.prompt("go")
    assert run.agent.state.messages[-1].text == "still fine"  # type: ignore[union-attr]


async def test_mcp_servers_are_passed_to_the_agent(tmp_path: Path) -> None:
    from workbench.mcp.config import McpServerConfig

    fake = Fake(tmp_path, [])
    servers = [
        McpServerConfig(name="files", command=("npx", "server-files"), env={"A": "1"}),
        McpServerConfig(name="web", url="http://127.0.0.1:9/mcp"),
    ]
    async with fake.run(mcp_servers=servers).connected():
        pass
    (new,) = fake.sent("session/new")
    assert new["params"]["mcpServers"] == [
        {"name": "files", "command": "npx", "args": ["server-files"],
         "env": [{"name": "A", "value": "1"}]},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []},
    ]  # fmt: skip


async def test_each_prompt_is_a_line_of_the_network_view(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"say": "one"}], [{"say": "two"}, {"stop": "max_tokens"}]])
    run = fake.run()
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("first")
        await run.agent.prompt("second")
    network = fold(bus.events).network
    assert list(network) == ["acp-prompt-1", "acp-prompt-2"]
    first, second = network.values()
    assert first.request.body["params"]["prompt"] == [{"type": "text", "text": "first"}]
    assert first.response is not None and first.response.finish_reason == "end_turn"
    assert second.response is not None and second.response.finish_reason == "max_tokens"
    assert run.agent.state.messages[-1].stop_reason == "length"  # type: ignore[union-attr]


async def test_a_call_the_prompt_ends_before_is_not_said_to_have_run(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[ask_call()[0], {"say": "changed my mind"}]])
    run = fake.run(approve="all")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("go")
    record = fold(bus.events).calls["c1"]
    assert record.status == "error"
    assert record.result_text.startswith("Not run: the agent's prompt ended before")
    assert "not asked" not in [label for _t, label, _d in record.events]


async def test_the_agent_gets_the_secrets_the_workbench_moved_out_of_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workbench takes its secrets out of `os.environ` at start-up (so no tool can
    read them there); the agent is your program and needs its keys, so it gets them."""
    from workbench import secret_env

    fake = Fake(tmp_path, [[{"say": "hi"}]])
    monkeypatch.setenv("FAKE_ACP_LOG", str(fake.log_path))
    monkeypatch.setattr(secret_env, "_held", {})
    assert secret_env.hold_environment(["FAKE_ACP_LOG"], os.environ) == ["FAKE_ACP_LOG"]
    assert "FAKE_ACP_LOG" not in os.environ
    run = fake.run(env={})
    async with run.connected():
        await run.agent.prompt("hello")
    assert fake.sent("session/prompt")  # the agent read the variable it was given


async def test_a_call_reported_running_then_asked_about_opens_the_dialog(
    tmp_path: Path,
) -> None:
    """Codex reports a shell command `in_progress`, then asks: the agent waits for the
    answer, so the person is asked as for any call (whether the loop's hook saw the
    request first or the status), and the call goes on running."""
    steps = ask_call()
    steps[0]["call"]["status"] = "in_progress"
    fake = Fake(tmp_path, [[*steps, {"say": "Done."}]])
    run = fake.run(approve="ask")
    bus = Bus(run)
    gate = run.runtime.gate
    assert gate is not None
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "go")
        request = await bus.first("permission_request")
        assert request.tool_call_id == "c1"
        gate.decide(request.request_id, PermissionAnswer.allow_once())
    assert selected(fake) == [{"outcome": "selected", "optionId": "allow-once"}]
    record = fold(bus.events).calls["c1"]
    assert (record.status, record.result_text) == ("done", "a.txt")
    assert record.decision is not None and record.decision.decided_by == "user"
    labels = [label for _t, label, _d in record.events]
    assert "permission requested" in labels


async def test_a_request_about_a_call_the_loop_follows_as_running_is_asked(
    tmp_path: Path,
) -> None:
    """The loop's hook has let the call run (the agent said in_progress), then the agent
    asks: the gate judges it now, with the dialog, and the agent gets the person's answer."""
    from workbench.acp.permission import PermissionAsk, answer_late
    from workbench.agent import BeforeToolCallContext
    from workbench.agent.config import AgentContext
    from workbench.agent.tool import JsonArguments
    from workbench.agent.types import AssistantMessage, ToolCall

    options = [
        {"optionId": "yes", "kind": "allow_once"},
        {"optionId": "no", "kind": "reject_once"},
    ]
    run = Fake(tmp_path, []).run(approve="ask")
    bus = Bus(run)
    gate = run.runtime.gate
    assert gate is not None
    answers = []
    for kind in ("allow", "deny"):
        call = run.report(
            {"toolCallId": kind, "kind": "execute", "status": "in_progress",
             "rawInput": {"command": "make"}},
            new=True,
        )  # fmt: skip
        await run.opened(call)
        tool_call = ToolCall(id=kind, name=call.name, arguments=call.arguments)
        call.judged = True
        call.context = BeforeToolCallContext(
            assistant_message=AssistantMessage(content=[tool_call]),
            tool_call=tool_call,
            args=JsonArguments.model_validate(call.arguments),
            context=AgentContext(),
            tool=run.tool_for(call.name),
        )
        ask = PermissionAsk(call, options)
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_late, run, ask)
            with anyio.fail_after(10):
                while not gate.pending:
                    await anyio.sleep(0.01)
            (request,) = gate.pending
            answer = PermissionAnswer.allow_once() if kind == "allow" else PermissionAnswer.deny()
            gate.decide(request.request_id, answer)
        answers.append(ask.answer.result())
    assert answers == [
        {"outcome": "selected", "optionId": "yes"},
        {"outcome": "selected", "optionId": "no"},
    ]
    assert [e.tool_call_id for e in bus.of("permission_request")] == ["allow", "deny"]
    notes = [e.label for e in bus.of("acp_call_update") if e.tool_call_id == "allow"]
    assert "asked after it was reported running" in notes


async def test_at_a_breakpoint_an_acp_call_takes_no_edit_and_no_result(tmp_path: Path) -> None:
    """Neither would reach the agent (it runs the call and tells its model itself): both
    are refused with the reason, and the call goes on when continued."""
    from workbench.breakpoints import StepperError
    from workbench.pauses import Resume

    fake = Fake(tmp_path, [[*ask_call()]])
    run = fake.run(approve="ask", allow=["Bash"], breakpoints=["Bash"])
    bus = Bus(run)
    stepper = run.runtime.stepper
    assert stepper is not None
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "go")
        paused = await bus.first("step_paused")
        for action in (Resume.edit({"command": "ls"}), Resume.inject("fake output")):
            with pytest.raises(StepperError, match="would not reach it"):
                stepper.resume(paused.pause_id, action)
        stepper.resume(paused.pause_id, "continue")
    record = fold(bus.events).calls["c1"]
    assert (record.status, record.result_text, record.injected) == ("done", "a.txt", False)
    assert selected(fake) == [{"outcome": "selected", "optionId": "allow-once"}]
