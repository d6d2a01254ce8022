"""What an ACP agent does through the client (files, terminals) is judged like a tool call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp.helpers import Fake, ask_call
from tests.acp.test_acp_run import Bus
from workbench.view.fold import fold

pytestmark = pytest.mark.timeout(60)


def said(bus: Bus) -> list[Any]:
    """What the fake agent said back after each client request (JSON it echoed)."""
    out = []
    for message in bus.of("message_end"):
        text = getattr(message.message, "text", "")
        out += [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return out


def allowed_call(*steps: dict[str, Any], call_id: str = "c1") -> list[dict[str, Any]]:
    """An allowed shell call whose work is `steps` (done through the client)."""
    announce, ask, running, _content, done = ask_call(call_id)
    return [announce, ask, running, *steps, done]


async def test_reads_inside_the_workspace_are_served_outside_refused(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"read": "notes.txt"}, {"read": "/etc/passwd"}, {"read": "../x"}]])
    (fake.workspace / "notes.txt").write_text("one\ntwo\n")
    run = fake.run(approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("read")
    first, second, third = said(bus)
    assert first == {"content": "one\ntwo\n"}
    assert "outside the workspace" in second["message"]
    assert "outside the workspace" in third["message"]


async def test_a_deny_rule_refuses_a_read(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"read": "secret.env"}]])
    (fake.workspace / "secret.env").write_text("KEY=1\n")
    run = fake.run(deny=['read_file(path="*.env")'], approve="all")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("read")
    (answer,) = said(bus)
    assert "Permission denied by rule" in answer["message"]
    notices = [i.text for i in fold(bus.events).items if i.kind == "notice"]
    assert any("client refused: read secret.env" in n for n in notices)


async def test_a_write_needs_an_allowed_call_to_cover_it(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path,
        [
            [{"write": "out.txt", "content": "alone"}],
            allowed_call({"write": "out.txt", "content": "covered"}),
            allowed_call({"write": ".git/config", "content": "x"}, call_id="c2"),
        ],
    )
    run = fake.run(allow=["Bash"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("write alone")
        assert not (fake.workspace / "out.txt").exists()
        await run.agent.prompt("write in a call")
        await run.agent.prompt("write a protected file")
    refused, served, protected = said(bus)
    assert "needs approval" in refused["message"]
    assert served == {}
    assert (fake.workspace / "out.txt").read_text() == "covered"
    assert ".git/config is protected" in protected["message"]
    assert not (fake.workspace / ".git" / "config").exists()
    history = [(label, detail) for _t, label, detail in fold(bus.events).calls["c1"].events]
    assert ("client: write out.txt", "under the call's permission") in history


async def test_a_terminal_streams_into_its_call_with_the_command_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_TEST_SECRET", "hunter2")
    command = "echo first; echo secret=$WORKBENCH_TEST_SECRET; exit 3"
    fake = Fake(tmp_path, [allowed_call({"terminal": command, "call": "c1"})])
    run = fake.run(allow=["Bash"], approve="rules")
    bus = Bus(run)
    async with run.connected():
        await run.agent.prompt("run it")
    (answer,) = said(bus)
    assert answer["exit"] == {"exitCode": 3}
    assert answer["output"] == "first\nsecret=\n"
    record = fold(bus.events).calls["c1"]
    assert record.result_text == "first\nsecret=\n"
    assert run.terminals.open == {}  # released: its process tree ended
