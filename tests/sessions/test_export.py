"""Export: the demo as a Markdown transcript and as normalized JSON messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.sessions.helpers import record_run

from workbench.__main__ import main
from workbench.agent import (
    AgentStartEvent,
    AssistantMessage,
    MessageEndEvent,
    ToolCall,
    UserMessage,
)
from workbench.sessions import Recorder, build_header, read_session
from workbench.sessions.export import to_json, to_markdown


@pytest.fixture(scope="module")
def demo_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import anyio

    base = tmp_path_factory.mktemp("demo")

    async def record() -> Path:
        runtime, _ = await record_run(base / "ws", session=base / "demo.jsonl")
        return base / "demo.jsonl"

    return anyio.run(record)


def test_markdown_has_every_turn_call_arguments_and_result(demo_session: Path) -> None:
    md = to_markdown(read_session(demo_session))
    assert md.startswith("# Session `demo.jsonl`\n")
    assert md.count("\n## Turn ") == 5
    assert md.count("\n### Tool call ") == 9
    assert "### Tool call `run_command` (`call_4_1`)" in md
    assert '"command": "python3 scripts/check_config.py"' in md
    assert "OK: apiBaseUrl = http://127.0.0.1:11434/v1, model = gpt-4o-mini" in md
    assert "Result (error):\n\n```text\nTool web_search not found\n```" in md
    # the malformed arguments are shown exactly as the model sent them
    raw = '{"pattern": "apiBaseUrl", "path": "."'
    assert f"as the model sent them (not a JSON object):\n\n```text\n{raw}\n```" in md
    assert "Permission: **allow** (by policy" in md
    assert "*Thinking:*" in md and "> The user wants to know" in md


def test_json_is_the_normalized_messages(demo_session: Path) -> None:
    session = read_session(demo_session)
    data = json.loads(to_json(session))
    assert data["format"] == "agent-workbench-transcript" and data["model"]["id"] == "scripted-demo"
    roles = [m["role"] for m in data["messages"]]
    assert roles[0] == "user" and roles.count("assistant") == 5 and roles.count("toolResult") == 9
    assert data["messages"] == [
        e.message.model_dump(mode="json") for e in session.events if e.type == "message_end"
    ]
    assert {t["name"] for t in data["tools"]} >= {"read_file", "run_command"}


def test_export_command_writes_a_file_or_stdout(
    demo_session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.md"
    assert main(["export", str(demo_session), "--format", "md", "-o", str(out)]) == 0
    assert out.read_text().startswith("# Session `demo.jsonl`")
    assert main(["export", str(demo_session), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages"]
    with pytest.raises(SystemExit) as exc:
        main(["export", str(demo_session), "--format", "xml"])
    assert exc.value.code == 2


def test_untrusted_text_is_literal_and_fences_hold(tmp_path: Path) -> None:
    from workbench.agent import Model

    path = tmp_path / "s.jsonl"
    recorder = Recorder.open(path, build_header(model=Model(id="m"), tools=[], workspace=tmp_path))
    call = ToolCall(id="c1", name="x", arguments={"a": "```"}, raw_arguments='{"a": "```"}')
    for event in (
        AgentStartEvent(),
        MessageEndEvent(message=UserMessage(content="hi \x1b[31mred")),
        MessageEndEvent(message=AssistantMessage(content=[call], stop_reason="toolUse")),
    ):
        recorder(event)
    md = to_markdown(read_session(path))
    assert "\x1b" not in md and "hi ␛[31mred" in md
    assert '````json\n{\n  "a": "```"\n}\n````' in md
    assert "Result: *none recorded*" in md


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_export_comes_in_pieces_that_add_up_to_the_whole(demo_session: Path, fmt: str) -> None:
    from workbench.sessions.export import export, iter_export

    session = read_session(demo_session)
    pieces = list(iter_export(session, fmt))  # type: ignore[arg-type]
    assert "".join(pieces) == export(session, fmt)  # type: ignore[arg-type]
    # One piece per turn or message at least: the export is written as it is made.
    assert len(pieces) > 10
    if fmt == "json":
        assert json.loads("".join(pieces))["messages"] == [
            e.message.model_dump(mode="json") for e in session.events if e.type == "message_end"
        ]
