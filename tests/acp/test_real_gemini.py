"""Gemini CLI over ACP (`gemini --experimental-acp`, npm, pinned; installed on first
use), its model a scripted Gemini server on 127.0.0.1: allowed by a rule, rejected by a
person, cancelled mid-call. Gemini CLI names its calls only by kind and title (no raw
input), and reports a command's end without its output: the workbench shows that."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.acp.test_acp_run import Bus
from tests.support.chat_server import ReceivedRequest, Reply
from tests.support.clients import GEMINI_CLI, npm_client
from tests.support.upstreams.gemini import GeminiServer, function_call, gemini_stream
from workbench.acp import AcpOptions, AcpRun
from workbench.permissions.answers import PermissionAnswer
from workbench.view.fold import fold

pytestmark = [pytest.mark.timeout(180), pytest.mark.clients]


@pytest.fixture(scope="session")
def gemini_acp() -> list[str]:
    return [str(npm_client(*GEMINI_CLI, "gemini")), "--experimental-acp", "--model", "gemini-test"]


class Gemini:
    """The agent and its scripted model: each turn asks for `command` until a function
    response comes back, then says `after`."""

    def __init__(self, command: list[str], tmp_path: Path, shell: str, after: str) -> None:
        self.server = GeminiServer()
        self.server.default = self.model
        self.shell, self.after = shell, after
        self.command = command
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.home = tmp_path / "gemini-home"
        (self.home / ".gemini").mkdir(parents=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(settings))

    def model(self, request: ReceivedRequest) -> Reply:
        contents = request.json.get("contents") or []
        last = contents[-1].get("parts", []) if contents else []
        if any("functionResponse" in p for p in last):
            return gemini_stream([{"text": self.after}])
        call = function_call("run_shell_command", {"command": self.shell, "description": "run"})
        return gemini_stream([{"text": "Running."}, call])

    def run(self, **options: Any) -> AcpRun:
        env = {
            "HOME": str(self.home),
            "GEMINI_API_KEY": "gemini-test-key",
            "GOOGLE_GEMINI_BASE_URL": self.server.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        return AcpRun(
            AcpOptions(
                command=self.command, env=env, workspace=self.workspace, record=False, **options
            )
        )

    def function_responses(self) -> list[dict[str, Any]]:
        out = []
        for request in self.server.requests:
            for content in request.json.get("contents") or []:
                for part in content.get("parts", []):
                    if "functionResponse" in part and part not in out:
                        out.append(part["functionResponse"])
        return out


@pytest.fixture
def gemini(gemini_acp: list[str], tmp_path: Path) -> Iterator[Any]:
    made: list[Gemini] = []

    def make(shell: str, after: str = "Done.") -> Gemini:
        agent = Gemini(gemini_acp, tmp_path, shell, after)
        agent.server.__enter__()
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.server.__exit__()


async def test_allowed_by_a_rule_on_its_kind_it_runs_and_the_model_gets_the_output(gemini):
    agent = gemini("printf 'hi\\nthere\\n' > out.txt; printf done")
    run = agent.run(allow=["execute"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        with anyio.fail_after(120):
            await run.agent.prompt("say hi")
    state = fold(bus.events)
    (record,) = state.calls.values()
    assert (record.name, record.status) == ("execute", "done")
    assert record.decision is not None and record.decision.decided_by == "rule"
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent: title"].startswith("printf 'hi")
    assert history["agent: raw input"] == "not reported"
    assert "agent: completed" in history
    assert (agent.workspace / "out.txt").read_text() == "hi\nthere\n"
    (response,) = agent.function_responses()
    assert "done" in json.dumps(response["response"])
    assert [i.text for i in state.items if i.kind == "assistant"][-1] == "Done."


async def test_a_rejection_fails_the_call_and_the_model_hears_it(gemini):
    agent = gemini("rm -rf build", after="Understood.")
    (agent.workspace / "build").mkdir()
    run = agent.run(approve="ask")
    bus = Bus(run)
    gate = run.runtime.gate
    assert gate is not None
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "clean up")
        request = await bus.first("permission_request")
        assert request.tool_name == "execute"
        gate.decide(request.request_id, PermissionAnswer(kind="deny", reason="not that"))
    record = fold(bus.events).calls[request.tool_call_id]
    assert record.status == "denied"
    assert (agent.workspace / "build").is_dir()
    history = {label: detail for _t, label, detail in record.events}
    assert history["agent told"].startswith("reject_once")
    # Gemini CLI tells its model that the call was cancelled, and the model goes on
    (response,) = agent.function_responses()
    assert response["name"] == "run_shell_command"
    assert [i.text for i in fold(bus.events).items if i.kind == "assistant"][-1] == "Understood."


async def test_cancel_mid_call_ends_the_prompt(gemini):
    agent = gemini("echo started > started.txt; sleep 60; echo late > late.txt")
    run = agent.run(allow=["execute"], approve="rules")
    bus = Bus(run)
    started = agent.workspace / "started.txt"
    async with run.connected(), anyio.create_task_group() as tg:
        tg.start_soon(run.agent.prompt, "wait")
        with anyio.fail_after(60):  # the command is running: it wrote its first file
            while not started.exists():
                await anyio.sleep(0.05)
        run.agent.abort("Cancelled by the user (ctrl+c)")
    assert run.agent.state.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]
    (record,) = fold(bus.events).calls.values()
    assert record.status == "aborted"
    assert len(bus.of("agent_end")) == 1
    assert not (agent.workspace / "late.txt").exists()
