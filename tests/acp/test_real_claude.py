"""Claude Code's ACP adapter (npm @zed-industries/claude-code-acp), its model a scripted
Anthropic server on 127.0.0.1: allow, reject, cancel mid-call, a diff, a terminal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp.anthropic_server import ScriptedAnthropic
from tests.acp.real_agents import CLAUDE_CODE_ACP, claude_env, installed
from tests.acp.test_acp_run import Bus
from workbench.acp import AcpOptions, AcpRun
from workbench.permissions.answers import PermissionAnswer
from workbench.proctree import running
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(180)
BASH = "mcp__acp__Bash"


@pytest.fixture(scope="session")
def claude_acp() -> list[str]:
    return installed(CLAUDE_CODE_ACP, "claude-code-acp")


def bash(command: str) -> dict[str, Any]:
    return {"tool": BASH, "input": {"command": command, "description": "Run it", "timeout": 60000}}


class Claude:
    def __init__(self, command: list[str], tmp_path: Path, turns: list[list[dict[str, Any]]]):
        self.server = ScriptedAnthropic(turns)
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.command = command
        self.home = tmp_path / "claude-home"

    def run(self, **options: Any) -> AcpRun:
        return AcpRun(
            AcpOptions(
                command=self.command,
                env=claude_env(self.server.url, self.home),
                workspace=self.workspace,
                record=False,
                **options,
            )
        )

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks the agent sent its model, in order."""
        out = []
        for request in self.server.main_requests:
            for message in request.get("messages", []):
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if block.get("type") == "tool_result" and block not in out:
                        out.append(block)
        return out


@pytest.fixture
def claude(claude_acp: list[str], tmp_path: Path) -> Iterator[Any]:
    made: list[Claude] = []

    def make(turns: list[list[dict[str, Any]]]) -> Claude:
        agent = Claude(claude_acp, tmp_path, turns)
        agent.server.__enter__()
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.server.__exit__()


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [])


async def test_allowed_by_a_rule_the_terminal_streams(claude: Any) -> None:
    agent = claude([[{"text": "Running."}, bash("printf 'hi\\nthere\\n'")], [{"text": "Done."}]])
    run = agent.run(allow=[f'{BASH}(command="printf *")'], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("say hi")
    state = fold(bus.events)
    (record,) = state.calls.values()
    assert (record.name, record.status) == (BASH, "done")
    assert record.parsed is not None and record.parsed["command"] == "printf 'hi\\nthere\\n'"
    assert record.decision is not None and record.decision.decided_by == "rule"
    assert record.result_text == "hi\nthere\n"
    assert record.update_count >= 1  # the terminal's output came live
    history = [label for _t, label, _d in record.events]
    assert "client: run printf 'hi\\nthere\\n'" in history
    assert "agent: completed" in history
    (result,) = agent.tool_results()
    assert "hi\nthere" in result_text(result)
    assert [i.text for i in state.items if i.kind == "assistant"][-1] == "Done."


async def test_a_rejection_fails_the_call_and_the_model_hears_it(claude: Any) -> None:
    agent = claude([[bash("rm -rf build")], [{"text": "Understood, I will not."}]])
    run = agent.run(approve="ask")
    bus = Bus(run)
    gate = run.runtime.gate
    assert gate is not None
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "clean up")
        request = await bus.first("permission_request")
        assert request.tool_name == BASH and request.args["command"] == "rm -rf build"
        gate.decide(request.request_id, PermissionAnswer(kind="deny", reason="not that"))
    record = fold(bus.events).calls[request.tool_call_id]
    assert record.status == "denied"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent told"].startswith("reject_once")
    assert "agent: failed" in history
    # Claude Code ends its turn on a rejection: the model is not asked again
    assert len(agent.server.main_requests) == 1
    assert run.agent.state.messages[-1].stop_reason == "stop"  # type: ignore[union-attr]


async def test_cancel_mid_call_ends_the_command_and_the_prompt(claude: Any) -> None:
    agent = claude([[bash("echo started; sleep 60")], [{"text": "never"}]])
    run = agent.run(allow=[BASH], approve="rules")
    bus = Bus(run)
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "wait")
        with anyio.fail_after(30):  # the command is running: its first line came back
            while not any("started" in t.text for t in run.terminals.open.values()):
                await anyio.sleep(0.02)
        (terminal,) = run.terminals.open.values()
        pid = terminal.process.pid
        run.agent.abort("Cancelled by the user (ctrl+c)")
    assert run.agent.state.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]
    assert not running(pid)
    assert run.terminals.open == {}
    (record,) = fold(bus.events).calls.values()
    assert record.status == "aborted"
    assert len(bus.of("agent_end")) == 1


async def test_an_edit_is_shown_as_a_diff(claude: Any) -> None:
    agent = claude(
        [
            [
                {
                    "tool": "mcp__acp__Edit",
                    "input": {"file_path": "", "old_string": "old line", "new_string": "new line"},
                }
            ],
            [{"text": "Edited."}],
        ]
    )
    notes = agent.workspace / "notes.txt"
    notes.write_text("first\nold line\nlast\n")
    turn = agent.server.turns[0][0]
    turn["input"]["file_path"] = str(notes)
    run = agent.run(allow=["mcp__acp__Edit"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("edit it")
    assert notes.read_text() == "first\nnew line\nlast\n"
    record = next(iter(fold(bus.events).calls.values()))
    assert record.status == "done"
    assert "-old line\n+new line" in record.result_text
    assert record.result_text.startswith("--- a/notes.txt\n+++ b/notes.txt")
    history = [label for _t, label, _d in record.events]
    assert f"client: read {notes}" in history and f"client: write {notes}" in history


async def test_its_model_traffic_through_the_proxy_is_in_the_run(claude: Any) -> None:
    agent = claude([[{"text": "Running."}, bash("echo hi")], [{"text": "Done."}]])
    run = agent.run(proxy=True, allow=[BASH], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("say hi")
    state = fold(bus.events)
    (record,) = state.calls.values()
    assert record.status == "done"
    through = [r for r in state.network.values() if r.request.provider == "proxy"]
    bodies = [r.request.body for r in through]
    # every request Claude Code's loop made (the ones with tools) was seen, in order,
    # each answered by the model behind the proxy
    looped = [b for b in bodies if b.get("tools")]
    assert len(looped) == len(agent.server.main_requests) == 2
    assert all(r.response is not None and r.response.status == 200 for r in through)
    assert {r.request.url for r in through} == {agent.server.url + "/v1/messages?beta=true"}
    last = looped[-1]["messages"]
    assert any(
        b.get("type") == "tool_result" for m in last for b in m["content"] if isinstance(b, dict)
    )


async def test_in_the_app_the_dialog_asks_and_the_terminal_streams(claude: Any) -> None:
    """In the app, with no rule: the dialog opens; allowed, the command runs in the
    workbench's terminal and its output is the call's result."""
    from tests.widgets.helpers import send, wait_for
    from workbench.widgets.acp_app import AcpApp
    from workbench.widgets.permission_modal import PermissionModal

    agent = claude([[bash("printf 'hi\\nthere\\n'")], [{"text": "Done."}]])
    app = AcpApp(agent.run(approve="ask"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set(), timeout=60)
        until = lambda: isinstance(app.screen, PermissionModal)  # noqa: E731
        await send(pilot, app, until, text="say hi", timeout=60)
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=60)
        (record,) = app.view_state.calls.values()
        assert (record.name, record.status) == (BASH, "done")
        assert record.decision is not None and record.decision.decided_by == "user"
        assert record.result_text == "hi\nthere\n"
    (result,) = agent.tool_results()
    assert "hi\nthere" in result_text(result)
