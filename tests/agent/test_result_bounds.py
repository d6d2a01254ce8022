"""Tool results: capped before the model and the session, secrets redacted, and a
tool stuck in a thread abandoned after the abort grace."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from workbench.agent import Agent, AgentToolResult, tool
from workbench.agent.result_limits import MAX_TEXT_CHARS, limit_result
from workbench.agent.types import ToolResultMessage
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.redact import Redactor, known_secrets
from workbench.runtime import RunOptions, build_runtime

KEY = "sk-proj-Zx81tU0c4a9QmR7p"


def scenario(*calls: dict[str, Any]) -> Scenario:
    return Scenario.model_validate(
        {"name": "s", "turns": [{"tool_calls": list(calls)}, {"text": "done"}]}
    )


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


async def test_a_huge_result_keeps_head_and_tail_and_says_its_size(tmp_path: Path) -> None:
    @tool
    async def flood() -> AgentToolResult:
        """Returns far too much."""
        text = "H" * 10 + "x" * 3_000_000 + "T" * 10
        return AgentToolResult.text(text, details={"raw": "y" * 300_000})

    provider = ScriptedProvider(scenario({"name": "flood", "arguments": {}}))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[flood])
    updates: list[Any] = []
    agent.subscribe(lambda e, _s: updates.append(e))
    await agent.prompt("go")
    [message] = results(agent)
    text = message.text
    assert len(text) < MAX_TEXT_CHARS + 500
    assert text.startswith("H" * 10) and text.endswith("T" * 10)
    assert "characters of this result left out: it was 3000020 characters (3000020 bytes)" in text
    assert len(message.details["raw"]) < MAX_TEXT_CHARS + 500
    end = next(e for e in updates if e.type == "tool_execution_end")
    assert end.result.content[0].text == text  # what the views and the session get


def test_a_small_result_is_passed_through_untouched() -> None:
    result = AgentToolResult.text("fine", details={"n": [1, "two"]})
    assert limit_result(result) is result
    assert limit_result(result, Redactor({"K": KEY})) is result


async def test_a_passed_key_printed_by_a_command_is_redacted_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    session = tmp_path / "s.jsonl"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    options = RunOptions(
        scenario=scenario(
            {"name": "run_command", "arguments": {"command": 'echo "key=$OPENAI_API_KEY"'}}
        ),
        workspace=workspace,
        approve="all",
        pass_env=["OPENAI_API_KEY"],
        session=session,
    )
    runtime = build_runtime(options)
    await runtime.agent.prompt("go")
    [message] = results(runtime.agent)
    assert message.text == "key=[REDACTED:OPENAI_API_KEY]"
    recorded = session.read_text()
    assert KEY not in recorded and "[REDACTED:OPENAI_API_KEY]" in recorded


def test_known_secrets_cover_provider_and_mcp_keys() -> None:
    from pydantic import SecretStr

    from workbench.mcp.config import McpServerConfig
    from workbench.providers.settings import OpenAISettings

    settings = OpenAISettings(model="m", api_key=SecretStr("sk-provider-123456"))
    server = McpServerConfig(
        name="files", url="http://127.0.0.1:1/mcp", headers={"Authorization": "Bearer tok-abcdef"}
    )
    stdio = McpServerConfig(name="db", command=("db-server",), env={"DB_PASS": "hunter22"})
    redact = Redactor(known_secrets(settings, [server, stdio], {"GH_TOKEN": "ghp_000000"}))
    assert redact("sk-provider-123456 tok-abcdef hunter22 ghp_000000 ok") == (
        "[REDACTED:api_key] [REDACTED:files header Authorization token] "
        "[REDACTED:db env DB_PASS] [REDACTED:GH_TOKEN] ok"
    )


async def test_a_tool_stuck_in_a_thread_is_abandoned_after_the_grace() -> None:
    release = threading.Event()

    @tool
    async def stuck() -> str:
        """Blocks in a thread that cannot be cancelled."""
        agent.abort("stop")  # the user aborts while the call runs
        await anyio.to_thread.run_sync(release.wait)
        return "late"

    provider = ScriptedProvider(scenario({"name": "stuck", "arguments": {}}))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[stuck], tool_abort_grace=0.1)
    try:
        with anyio.fail_after(5):
            await agent.prompt("go")
        [message] = results(agent)
        assert message.is_error
        assert "did not stop within 0.1s of the abort signal, nor when cancelled" in message.text
        assert "abandoned" in message.text
    finally:
        release.set()  # the abandoned thread ends; its outcome is dropped


@pytest.mark.parametrize(
    "name, secret",
    [
        ("OPENAI_API_KEY", True),
        ("GH_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("DB_PASSWORD", True),
        ("GITHUB_PAT", True),
        ("SSH_AUTH_SOCK", False),
        ("GNOME_KEYRING_CONTROL", False),
        ("XDG_SESSION_TYPE", False),
        ("PATH", False),
    ],
)
def test_which_environment_variables_count_as_secrets(name: str, secret: bool) -> None:
    assert (name in known_secrets(environ={name: "value-123456"})) is secret


STUCK_PROGRAM = """
import threading, anyio
from workbench.cli.main import leave
from workbench.agent import Agent, tool
from workbench.providers.scripted import Scenario, ScriptedProvider

@tool
async def stuck() -> str:
    '''Blocks in a thread forever.'''
    agent.abort("stop")
    await anyio.to_thread.run_sync(threading.Event().wait)
    return "never"

turns = [{"tool_calls": [{"name": "stuck", "arguments": {}}]}, {"text": "done"}]
provider = ScriptedProvider(Scenario.model_validate({"name": "s", "turns": turns}))
agent = Agent(stream_fn=provider, model=provider.model, tools=[stuck], tool_abort_grace=0.1)
anyio.run(agent.prompt, "go")
print("run ended", flush=True)
raise SystemExit(leave(7))
"""


def test_a_process_with_an_abandoned_thread_still_exits() -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", STUCK_PROGRAM], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.stdout == "run ended\n"
    assert "exiting without waiting for a tool that ignored the abort" in done.stderr
    assert done.returncode == 7
