"""`workbench acp`: the command line, the [acp] table, headless runs and their sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp.helpers import Fake, ask_call
from tests.widgets.helpers import send, wait_for
from workbench.__main__ import main
from workbench.sessions.reader import read_session
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(60)


def test_headless_run_prints_records_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = Fake(tmp_path, [[{"say": "Listing."}, *ask_call(), {"say": "Done."}]])
    monkeypatch.chdir(fake.workspace)
    session = tmp_path / "run.jsonl"
    code = main(
        ["acp", "--headless", "list", "--allow", "Bash", "--session", str(session), "--",
         *fake.command()]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0
    assert "→ Bash" in out and "allow Bash by rule (Bash from --allow)" in out
    assert f"session recorded to {session}" in err
    loaded = read_session(session)
    assert loaded.header.model.provider == "acp"
    state = fold(loaded.events)
    assert state.calls["c1"].status == "done"
    assert [i.text for i in state.items if i.kind == "assistant"] == ["Listing.", "Done."]


def test_headless_denial_is_the_agents_rejection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = Fake(tmp_path, [[*ask_call()]])
    monkeypatch.chdir(fake.workspace)
    code = main(["acp", "--no-record", "--headless", "go", "--", *fake.command()])
    out, _err = capsys.readouterr()
    assert code == 0  # the agent ended its turn after the rejection
    assert "deny Bash by policy" in out
    answers = [m["result"] for m in fake.answers() if "outcome" in m.get("result", {})]
    assert answers == []  # no FAKE_ACP_LOG without --env: nothing logged
    assert "The call was rejected; stopping." in out


def test_the_acp_table_of_the_project_file_names_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = Fake(tmp_path, [[{"say": "from the table"}]])
    command = fake.command()
    (fake.workspace / "workbench.toml").write_text(
        f"[acp]\ncommand = {json.dumps(command[0])}\nargs = {json.dumps(command[1:])}\n"
        f'env = {{ FAKE_ACP_LOG = {json.dumps(str(fake.log_path))} }}\nmode = "plan"\n'
    )
    monkeypatch.chdir(fake.workspace)
    code = main(["acp", "--no-record", "--headless", "hi"])
    out, _err = capsys.readouterr()
    assert code == 0 and "from the table" in out
    assert fake.sent("session/set_mode")[0]["params"]["modeId"] == "plan"


def test_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["acp", "--headless", "hi"]) == 2
    assert "no agent: give its command after --" in capsys.readouterr().err
    assert main(["acp", "--no-record", "--headless", "hi", "--", "/nonexistent/agent"]) == 2
    assert "cannot start /nonexistent/agent" in capsys.readouterr().err
    (tmp_path / "workbench.toml").write_text('[acp]\ncommand = "x"\nbogus = 1\n')
    assert main(["acp", "--headless", "hi"]) == 2
    assert "acp.bogus" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["acp", "--approve", "ask", "--headless", "hi", "--", "x"])
    assert exited.value.code == 2


def test_the_command_opens_the_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.app import App

    from workbench.widgets.acp_app import AcpApp

    fake = Fake(tmp_path, [[{"say": "hello from the app"}]])
    monkeypatch.chdir(fake.workspace)
    seen: list[str] = []

    async def drive(pilot: Any) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text="hi")
        seen.append(app.view_state.items[-1].text)
        app.exit(0)

    def headless_run(self: AcpApp, **_kwargs: Any) -> Any:
        return App.run(self, headless=True, size=(120, 40), auto_pilot=drive)

    monkeypatch.setattr(AcpApp, "run", headless_run)
    session = tmp_path / "app.jsonl"
    code = main(["acp", "--session", str(session), "--", *fake.command()])
    assert code == 0 and seen == ["hello from the app"]
    assert f"session recorded to {session}" in capsys.readouterr().err
