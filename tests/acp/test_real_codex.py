"""Codex's ACP adapter (npm @zed-industries/codex-acp), its model a scripted Responses
server on 127.0.0.1: a command it asks about allowed, rejected, and a prompt cancelled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp.real_agents import CODEX_ACP, installed
from tests.acp.responses_server import ScriptedResponses
from tests.acp.test_acp_run import Bus
from workbench.acp import AcpOptions, AcpRun
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="session")
def codex_acp() -> list[str]:
    return installed(CODEX_ACP, "codex-acp")


def escalated(command: str) -> dict[str, Any]:
    """A command run outside Codex's sandbox: Codex asks the client's permission first
    (and this machine has no bubblewrap for its sandbox anyway).

    The tool is `shell_command`: Codex's `exec_command` (its "unified exec", the
    default) loses the end of a command that exits at once in about a third of runs
    (codex-acp 0.16.0 reports it `in_progress` with a `process_id` and never again,
    though the model gets the output); `shell_command` reports every end. The
    Codex home below turns unified exec off, as docs/acp.md advises."""
    return {
        "tool": "shell_command",
        "input": {
            "command": command,
            "sandbox_permissions": "require_escalated",
            "justification": "run it",
        },
    }


class Codex:
    def __init__(self, command: list[str], tmp_path: Path, turns: list[list[dict[str, Any]]]):
        self.server = ScriptedResponses(turns)
        self.command = command
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.home = tmp_path / "codex-home"
        self.home.mkdir()

    def run(self, **options: Any) -> AcpRun:
        (self.home / "config.toml").write_text(
            'model = "gpt-5.4"\nmodel_provider = "scripted"\n'
            "[features]\nunified_exec = false\n"
            "[model_providers.scripted]\n"
            f'name = "scripted"\nbase_url = "{self.server.url}"\n'
            'env_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        # a home of its own: Codex runs commands in a login shell, which would read the
        # machine's profile (a slow one outlasts Codex's wait for the command)
        env = {"OPENAI_API_KEY": "sk-test", "CODEX_HOME": str(self.home), "HOME": str(self.home)}
        return AcpRun(
            AcpOptions(
                command=self.command, env=env, workspace=self.workspace, record=False, **options
            )
        )

    def outputs(self) -> list[str]:
        """The function-call outputs Codex sent its model, in order."""
        out: list[str] = []
        for request in self.server.main_requests:
            for item in request.get("input", []):
                if item.get("type") == "function_call_output" and item["output"] not in out:
                    out.append(item["output"])
        return out


@pytest.fixture
def codex(codex_acp: list[str], tmp_path: Path) -> Iterator[Any]:
    made: list[Codex] = []

    def make(turns: list[list[dict[str, Any]]]) -> Codex:
        agent = Codex(codex_acp, tmp_path, turns)
        agent.server.__enter__()
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.server.__exit__()


async def test_allowed_by_a_rule_it_runs_and_the_model_gets_the_output(codex: Any) -> None:
    agent = codex([[{"text": "Running."}, escalated("echo hi; echo there")], [{"text": "Done."}]])
    run = agent.run(allow=["execute"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("say hi")
    assert run.agent_info["agentInfo"]["name"] == "codex-acp"
    (record,) = fold(bus.events).calls.values()
    assert (record.name, record.status) == ("execute", "done"), (record.result_text, record.events)
    assert record.decision is not None and record.decision.decided_by == "rule"
    assert "hi\nthere" in record.result_text
    assert record.parsed is not None and record.parsed["command"][-1] == "echo hi; echo there"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent told"].startswith("allow_once")
    assert "Exit code: 0" in agent.outputs()[0] and "Output:\nhi\nthere" in agent.outputs()[0]
    assert run.agent.state.messages[-1].text == "Done."  # type: ignore[union-attr]


async def test_no_rule_headless_rejects_and_the_command_never_runs(codex: Any) -> None:
    marker = "made-by-codex"
    agent = codex([[escalated(f"touch {marker}")], [{"text": "Not run."}]])
    run = agent.run(approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("make a file")
    assert not (agent.workspace / marker).exists()
    (record,) = fold(bus.events).calls.values()
    assert record.status == "denied"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent told"].startswith("reject_once")


async def test_cancel_while_the_model_streams(codex: Any) -> None:
    agent = codex([[{"text": "Thinking it over"}, {"wait": True}, {"text": "never shown"}]])
    run = agent.run()
    bus = Bus(run)
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "take your time")
        await bus.first("message_update")
        run.agent.abort("Cancelled by the user (ctrl+c)")
    agent.server.release()
    last = run.agent.state.messages[-1]
    assert last.stop_reason == "aborted"  # type: ignore[union-attr]
    assert "never shown" not in last.text  # type: ignore[union-attr]


async def test_in_the_app_the_dialog_asks_and_the_command_runs(codex: Any) -> None:
    """Codex reports the command running, then asks: the dialog opens all the same."""
    from tests.widgets.helpers import send, wait_for
    from workbench.widgets.acp_app import AcpApp
    from workbench.widgets.permission_modal import PermissionModal

    agent = codex([[escalated("echo hi; echo there")], [{"text": "Done."}]])
    app = AcpApp(agent.run(approve="ask"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set(), timeout=60)
        until = lambda: isinstance(app.screen, PermissionModal)  # noqa: E731
        await send(pilot, app, until, text="say hi", timeout=60)
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=60)
        (record,) = app.view_state.calls.values()
        assert record.status == "done" and record.decision.decided_by == "user"
        assert "hi\nthere" in record.result_text
    assert "Output:\nhi\nthere" in agent.outputs()[0]
