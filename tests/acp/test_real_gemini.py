"""Gemini CLI in ACP mode (npm @google/gemini-cli, `--acp`), its model a scripted Gemini
server on 127.0.0.1: a command allowed by a rule, rejected headless, a prompt cancelled.

Gemini CLI asks about a shell command before it announces it (the request is the
call's first report), runs the command itself, and reports the call completed with
no content: the command's output goes to its model only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp.gemini_server import ScriptedGemini
from tests.acp.real_agents import GEMINI_CLI, GEMINI_MODEL, gemini_env, installed
from tests.acp.test_acp_run import Bus
from workbench.acp import AcpOptions, AcpRun
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="session")
def gemini_cli() -> list[str]:
    return [*installed(GEMINI_CLI, "gemini"), "--acp", "--model", GEMINI_MODEL]


def shell(command: str) -> dict[str, Any]:
    return {"tool": "run_shell_command", "input": {"command": command, "description": "Run it"}}


class Gemini:
    def __init__(self, command: list[str], tmp_path: Path, turns: list[list[dict[str, Any]]]):
        self.server = ScriptedGemini(turns)
        self.command = command
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.home = tmp_path / "home"

    def run(self, **options: Any) -> AcpRun:
        env = gemini_env(self.server.url, self.home)
        return AcpRun(
            AcpOptions(
                command=self.command, env=env, workspace=self.workspace, record=False, **options
            )
        )

    def responses(self) -> list[dict[str, Any]]:
        """The function responses Gemini CLI sent its model, in order."""
        out: list[dict[str, Any]] = []
        for request in self.server.main_requests:
            for content in request.get("contents", []):
                for part in content.get("parts", []):
                    response = part.get("functionResponse")
                    if response is not None and response not in out:
                        out.append(response)
        return out


@pytest.fixture
def gemini(gemini_cli: list[str], tmp_path: Path) -> Iterator[Any]:
    made: list[Gemini] = []

    def make(turns: list[list[dict[str, Any]]]) -> Gemini:
        agent = Gemini(gemini_cli, tmp_path, turns)
        agent.server.__enter__()
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.server.__exit__()


async def test_allowed_by_a_rule_it_runs_and_the_model_gets_the_output(gemini: Any) -> None:
    agent = gemini([[{"text": "Running."}, shell("echo hi; echo there")], [{"text": "Done."}]])
    run = agent.run(allow=["execute"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("say hi")
    assert run.agent_info["agentInfo"]["name"] == "gemini-cli"
    (record,) = fold(bus.events).calls.values()
    assert (record.name, record.status) == ("execute", "done")
    assert record.decision is not None and record.decision.decided_by == "rule"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent: title"] == "echo hi; echo there"
    assert history["agent: raw input"] == "not reported"
    assert history["agent told"].startswith("allow_once")
    assert record.result_text == "(the agent reported no content for this call)"
    (response,) = agent.responses()
    assert "hi\nthere" in response["response"]["output"]
    assert run.agent.state.messages[-1].text == "Done."  # type: ignore[union-attr]


async def test_no_rule_headless_rejects_and_the_command_never_runs(gemini: Any) -> None:
    marker = "made-by-gemini"
    agent = gemini([[shell(f"touch {marker}")], [{"text": "Not run."}]])
    run = agent.run(approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("make a file")
    assert not (agent.workspace / marker).exists()
    (record,) = fold(bus.events).calls.values()
    assert record.status == "denied"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent told"].startswith("reject_once")


async def test_cancel_while_the_model_streams(gemini: Any) -> None:
    agent = gemini([[{"text": "Thinking it over"}, {"wait": True}, {"text": "never shown"}]])
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


async def test_in_the_app_the_dialog_asks_and_a_denial_reaches_the_model(gemini: Any) -> None:
    from tests.widgets.helpers import send, wait_for
    from workbench.widgets.acp_app import AcpApp
    from workbench.widgets.permission_modal import PermissionModal

    agent = gemini([[shell("rm -rf build")], [{"text": "Understood."}]])
    app = AcpApp(agent.run(approve="ask"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set(), timeout=60)
        until = lambda: isinstance(app.screen, PermissionModal)  # noqa: E731
        await send(pilot, app, until, text="clean up", timeout=60)
        await pilot.press("ctrl+n")
        await pilot.press(*"not that", "enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=60)
        (record,) = app.view_state.calls.values()
        assert record.status == "denied" and record.decision.decided_by == "user"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent told"].startswith("reject_once")
    assert agent.responses(), "Gemini CLI told its model the call was rejected"
