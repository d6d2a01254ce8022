"""Your own `Agent`, from Python: `workbench.run_headless` / `attach` / `workbench run`.
Your stream_fn, tools and hooks stay yours; the gate and the stepper chain after your
hooks (a deny from either side wins), everything is recorded, and all of it is undone
when the workbench returns."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import workbench
from workbench.__main__ import main
from workbench.agent import Agent, BeforeToolCallResult, tool
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.sessions.reader import read_session

SCENARIO = {
    "name": "embedded",
    "turns": [
        {
            "tool_calls": [
                {"id": "a", "name": "note", "arguments": {"text": "hello"}},
                {"id": "b", "name": "note", "arguments": {"text": "secret"}},
                {"id": "c", "name": "note", "arguments": {"text": "rewrite me"}},
            ]
        },
        {"text": "done"},
    ],
}

written: list[str] = []


@tool
def note(text: str) -> str:
    """Write a note."""
    written.append(text)
    return f"noted {text}"


def make_agent() -> Agent:
    provider = ScriptedProvider(Scenario.model_validate(SCENARIO))

    def mine(ctx: Any, _signal: Any) -> BeforeToolCallResult | None:
        if ctx.args.text == "secret":
            return BeforeToolCallResult(block=True, reason="my hook says no")
        if ctx.args.text == "rewrite me":
            ctx.args.text = "forbidden"  # the gate must judge what will really run
        return None

    return Agent(
        stream_fn=provider,
        model=provider.model,
        tools=[note],
        before_tool_call=mine,
        system_prompt="yours",
    )


def quiet() -> Console:
    return Console(file=io.StringIO(), width=120)


async def test_your_hook_runs_first_and_a_deny_from_either_side_wins(tmp_path: Path) -> None:
    written.clear()
    agent = make_agent()
    mine, stream = agent.before_tool_call, agent.stream_fn
    session = tmp_path / "s.jsonl"
    code = await workbench.run_headless(
        agent,
        "go",
        approve="all",
        deny=['note(text="forbidden")'],
        session=session,
        workspace=tmp_path,
        console=quiet(),
    )
    assert code == 0
    assert written == ["hello"]
    results = {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}
    assert not results["a"].is_error
    assert results["b"].is_error and "my hook says no" in results["b"].text
    assert results["c"].is_error and "forbidden" in results["c"].text
    # yours again afterwards, and the run was recorded as usual
    assert agent.before_tool_call is mine and agent.stream_fn is stream
    assert agent.bus._listeners == []  # the recorder and the printer are gone too
    recorded = read_session(session)
    assert recorded.header.system_prompt == "yours"
    assert [t.source for t in recorded.header.tools] == [note.source]
    assert note.source is not None and note.source.startswith("file ")
    assert any(e.type == "permission_decision" for e in recorded.events)
    # with the workspace's files, a manifest first
    from workbench.sessions.checkpoints import read_records

    kinds = [r.type for _, r in read_records(recorded)]
    assert kinds[0] == "workspace_manifest"


async def test_attach_refuses_twice_and_headless_refuses_ask(tmp_path: Path) -> None:
    agent = make_agent()
    with workbench.attach(agent, workspace=tmp_path, record=False):
        with pytest.raises(RuntimeError, match="already attached"):
            with workbench.attach(agent, record=False):
                pass
    with pytest.raises(ValueError, match="needs the app"):
        await workbench.run_headless(agent, "go", approve="ask")


AGENT_FILE = '''
from workbench.agent import Agent
from workbench.providers.scripted import Scenario, ScriptedProvider

def shout(text: str) -> str:
    """Shout."""
    return text.upper()

def make_agent():
    from workbench.agent import tool
    s = Scenario.model_validate({"name": "f", "turns": [
        {"tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]}, {"text": "ok"}]})
    p = ScriptedProvider(s)
    return Agent(stream_fn=p, model=p.model, tools=[tool(shout)])

agent = make_agent()
not_an_agent = 42

def needs_args(x):
    return x

def broken():
    raise RuntimeError("factory broke")
'''


@pytest.mark.parametrize("target", ["my_agent.py:agent", "my_agent.py:make_agent", "my_agent.py"])
def test_workbench_run_takes_an_agent_or_a_factory(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_agent.py").write_text(textwrap.dedent(AGENT_FILE), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", target, "--headless", "go", "--approve", "all"]) == 0
    out = capsys.readouterr()
    assert "│ HI" in out.out and "session" in out.err


@pytest.mark.parametrize(
    ("target", "needle"),
    [
        ("my_agent.py:not_an_agent", "not_an_agent is a int, not a workbench Agent"),
        ("my_agent.py:needs_args", "needs_args needs arguments"),
        ("my_agent.py:nothing", "defines no 'nothing'"),
        ("my_agent.py:broken", "RuntimeError: factory broke"),
    ],
)
def test_workbench_run_errors_are_one_message_and_exit_2(
    target: str,
    needle: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "my_agent.py").write_text(textwrap.dedent(AGENT_FILE), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", target, "--headless", "go"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "embed.py" not in err


async def test_your_openai_provider_gets_the_network_view_and_the_tool_choice_reset(
    tmp_path: Path,
) -> None:
    from tests.support.chat_server import (
        ChatServer,
        finish,
        stream_reply,
        text_chunks,
        tool_call_chunks,
    )
    from workbench.providers.openai import OpenAIProvider
    from workbench.providers.settings import OpenAISettings

    seen: list[str] = []
    with ChatServer() as srv:
        srv.script(
            stream_reply(
                [*tool_call_chunks(0, "c1", "note", '{"text": "x"}'), finish("tool_calls")]
            ),
            stream_reply([*text_chunks("ok"), finish("stop")]),
        )
        provider = OpenAIProvider(
            OpenAISettings(base_url=srv.url, model="m", tool_choice="required", max_retries=0)
        )
        agent = Agent(stream_fn=provider, model=provider.model, tools=[note])
        agent.subscribe(lambda e, _s=None: seen.append(e.type))
        code = await workbench.run_headless(
            agent, "go", approve="all", workspace=tmp_path, record=False, console=quiet()
        )
        bodies = srv.bodies
    assert code == 0
    assert [b["tool_choice"] for b in bodies] == ["required", "auto"]
    assert "provider_request" in seen  # the requests reach the bus (the network view)
    assert provider.publish is None  # and yours again afterwards


async def test_step_mode_pauses_before_your_own_stream_fn_and_f4_sees_its_request(
    tmp_path: Path,
) -> None:
    """Your stream_fn (one that does not publish its own requests) is reported on the
    network view *and* stepped: the run pauses before each model request, as a built
    run does."""
    import anyio

    from workbench.bus_events import ProviderRequestEvent

    provider = ScriptedProvider(
        Scenario.model_validate({"name": "yours", "turns": [{"text": "done"}]})
    )

    def yours(model: Any, context: Any, options: Any) -> Any:
        return provider(model, context, options)

    agent = Agent(stream_fn=yours, model=provider.model)
    requests: list[Any] = []
    with workbench.attach(agent, step=True, record=False, workspace=tmp_path) as runtime:
        agent.subscribe(
            lambda e, *_: requests.append(e) if isinstance(e, ProviderRequestEvent) else None
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "go")
            with anyio.fail_after(10):
                while runtime.stepper.paused is None:
                    await anyio.sleep(0.01)
            assert runtime.stepper.paused.point == "before_model"
            assert requests == []  # paused before the request went out
            runtime.stepper.resume(runtime.stepper.paused.pause_id, "continue")
    assert len(requests) == 1
    assert agent.state.messages[-1].text == "done"
