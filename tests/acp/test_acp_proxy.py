"""`AcpOptions.proxy`: the agent's model requests go through a workbench proxy, and
the run shows and records them next to its ACP messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acp.anthropic_server import ScriptedAnthropic
from tests.acp.helpers import Fake
from tests.acp.test_acp_run import Bus
from workbench.acp import AcpError
from workbench.sessions.reader import read_session
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def model() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic([]) as server:
        yield server


async def test_the_agents_model_requests_are_in_the_runs_network_view(
    tmp_path: Path, model: ScriptedAnthropic
) -> None:
    fake = Fake(tmp_path, [[{"model": "hello model"}]])
    session = tmp_path / "acp.jsonl"
    env = {
        "FAKE_ACP_LOG": str(fake.log_path),
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-secret-key",
    }
    run = fake.run(proxy=True, env=env, record=True, session=session)
    bus = Bus(run)
    async with run.connected():
        assert run.proxy_url is not None and run.proxy_url.startswith("http://127.0.0.1:")
        await run.agent.prompt("go")
    run.runtime.recorder.close()  # type: ignore[union-attr]
    assert run.agent.state.messages[-1].text == "ok"  # type: ignore[union-attr]
    # the model was reached through the proxy, with the agent's own key
    (request,) = model.requests
    assert request["messages"] == [{"role": "user", "content": "hello model"}]
    for state in (fold(bus.events), fold(read_session(session).events)):
        lines = list(state.network.values())
        assert [r.request.provider for r in lines] == ["acp", "proxy"]
        through = lines[1]
        assert through.request.url == model.url + "/v1/messages"
        assert through.request.body["messages"][0]["content"] == "hello model"
        assert through.response is not None and through.response.status == 200
        assert state.turns[0].request_ids == [r.request.request_id for r in lines]
    text = session.read_text()
    assert "sk-ant-secret-key" not in text
    notices = [i.text for i in fold(bus.events).items if i.kind == "notice"]
    assert any("go through the proxy at http://127.0.0.1:" in n for n in notices)


async def test_without_a_base_url_the_proxy_says_what_it_needs(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [])
    run = fake.run(proxy=True)
    run.options.env = {
        k: "" for k in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL")
    }
    with pytest.raises(AcpError, match="--proxy needs the model's base URL"):
        async with run.connected():
            pass


def test_the_command_line_puts_the_proxy_before_the_model(
    tmp_path: Path,
    model: ScriptedAnthropic,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workbench.__main__ import main

    fake = Fake(tmp_path, [[{"model": "hi"}]])
    monkeypatch.chdir(fake.workspace)
    session = tmp_path / "run.jsonl"
    upstream = model.url + "/v1"
    code = main(
        ["acp", "--headless", "go", "--proxy-upstream", upstream, "--session", str(session),
         "--", *fake.command()]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    lines = list(fold(read_session(session).events).network.values())
    assert [(r.request.provider, r.request.url) for r in lines] == [
        ("acp", None),
        ("proxy", upstream + "/messages"),
    ]
    assert len(model.requests) == 1


async def test_f4_lists_the_prompt_and_the_model_request(
    tmp_path: Path, model: ScriptedAnthropic
) -> None:
    from textual.widgets import OptionList

    from tests.widgets.helpers import send, wait_for
    from workbench.widgets.acp_app import AcpApp
    from workbench.widgets.network_view import NetworkViewScreen

    fake = Fake(tmp_path, [[{"model": "hello"}]])
    env = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
    app = AcpApp(fake.run(proxy=True, env=env))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text="go")
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [label.split("  ")[1] for label in labels] == [
            "ACP prompt",
            "model (proxy)",
        ]
        assert "end_turn" in labels[0] and "200" in labels[1]
        await pilot.press("escape")
