"""Your prompt and the run's limits, against a real OpenAI-compatible server: the request
carries your system prompt and your tools' schemas; `--max-turns` stops cleanly; a forced
tool choice becomes auto after the first tool call unless it is sticky."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.chat_server import (
    ChatServer,
    ReceivedRequest,
    Reply,
    finish,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from workbench.__main__ import main
from workbench.cli.args import EXIT_MAX_TURNS
from workbench.sessions.reader import read_session

REPO = Path(__file__).resolve().parents[2]

MY_TOOLS = '''
from workbench.agent import tool

def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b

@tool
async def shout(text: str) -> str:
    """Shout it."""
    return text.upper()
'''

SCENARIO = {
    "name": "mine",
    "turns": [
        {
            "tool_calls": [
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "shout", "arguments": {"text": "hi"}},
            ]
        },
        {"text": "5, HI"},
    ],
}


def tool_reply(n: int = 0) -> Reply:
    args = json.dumps({"a": n, "b": 1})
    return stream_reply([*tool_call_chunks(0, f"call_{n}", "add", args), finish("tool_calls")])


def text_reply(text: str = "Done.") -> Reply:
    return stream_reply([*text_chunks(text), finish("stop")])


def forced_model(request: ReceivedRequest) -> Reply:
    """Like llama.cpp under a forced choice: a tool call whenever one is forced."""
    choice = request.json.get("tool_choice")
    forced = choice not in (None, "auto", "none")
    return tool_reply(len(request.json["messages"])) if forced else text_reply()


@pytest.fixture
def empty_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory outside the repo holding only the user's files."""
    (tmp_path / "my_tools.py").write_text(MY_TOOLS, encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def workbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


def test_your_tools_run_from_an_empty_directory(empty_dir: Path) -> None:
    out = workbench(
        empty_dir,
        "--headless",
        "go",
        "--tools",
        "./my_tools.py",
        "--scenario",
        "s.json",
        "--approve",
        "all",
        "--system-prompt",
        "Be terse.",
    )
    assert out.returncode == 0, out.stderr
    assert "✓ result add" in out.stdout and "│ 5" in out.stdout
    assert "✓ result shout" in out.stdout and "│ HI" in out.stdout
    session = read_session(Path(out.stderr.split("recording the session to ")[1].split()[0]))
    assert session.header.system_prompt == "Be terse."
    assert [(t.name, t.source) for t in session.header.tools][-2:] == [
        ("add", "file my_tools.py:4"),
        ("shout", "file my_tools.py:8"),
    ]


def test_the_request_carries_your_system_prompt_and_tool_schemas(
    empty_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer() as srv:
        srv.script(tool_reply(1), text_reply("2"))
        code = main(
            [
                "--headless",
                "go",
                "--tools",
                "./my_tools.py",
                "--builtin-tools",
                "none",
                "--base-url",
                srv.url,
                "--model",
                "test-model",
                "--approve",
                "all",
                "--system-prompt-file",
                str(prompt_file(empty_dir)),
                "--no-record",
            ]
        )
        assert code == 0, capsys.readouterr()
        body = srv.requests[0].json
    assert body["messages"][0] == {"role": "system", "content": "Be terse.\nVery."}
    tools = {t["function"]["name"]: t["function"] for t in body["tools"]}
    assert list(tools) == ["add", "shout"]
    assert tools["add"]["description"] == "Add two numbers."
    assert tools["add"]["parameters"]["properties"]["a"]["type"] == "integer"
    assert tools["shout"]["parameters"]["required"] == ["text"]


def prompt_file(directory: Path) -> Path:
    path = directory / "prompt.md"
    path.write_text("Be terse.\nVery.", encoding="utf-8")
    return path


def run_forced(empty_dir: Path, *extra: str) -> tuple[int, list[Any], str]:
    with ChatServer(default=forced_model) as srv:
        code = main(
            [
                "--headless",
                "go",
                "--tools",
                "./my_tools.py",
                "--builtin-tools",
                "none",
                "--base-url",
                srv.url,
                "--model",
                "test-model",
                "--approve",
                "all",
                "--tool-choice",
                "add",
                "--no-record",
                *extra,
            ]
        )
        return code, srv.bodies, ""


def test_max_turns_stops_a_sticky_forced_run_after_n_turns(
    empty_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, bodies, _ = run_forced(empty_dir, "--tool-choice-sticky", "--max-turns", "3")
    out = capsys.readouterr().out
    assert code == EXIT_MAX_TURNS == 4
    assert len(bodies) == 3
    assert all(
        b["tool_choice"] == {"type": "function", "function": {"name": "add"}} for b in bodies
    )
    assert "Stopped after 3 model turns (--max-turns 3)" in out
    assert out.count("✓ result add") == 3  # the last turn's call has its result


def test_a_forced_choice_becomes_auto_after_the_first_tool_call(
    empty_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, bodies, _ = run_forced(empty_dir)
    assert code == 0, capsys.readouterr()
    assert [b["tool_choice"] for b in bodies] == [
        {"type": "function", "function": {"name": "add"}},
        "auto",
    ]


def test_bad_limits_and_prompt_files_are_one_line(
    empty_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--max-turns", "0"])
    assert caught.value.code == 2 and "must be at least 1" in capsys.readouterr().err
    assert main(["--headless", "go", "--system-prompt-file", "nope.md", "--no-record"]) == 2
    assert "--system-prompt-file nope.md" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--system-prompt", "a", "--system-prompt-file", "b"])
    assert "not allowed with" in capsys.readouterr().err


async def test_the_limit_stops_between_turns_and_the_run_can_go_on(tmp_path: Path) -> None:
    from workbench.providers.scripted import Scenario
    from workbench.runtime import RunOptions, build_runtime

    call = {"tool_calls": [{"name": "list_directory", "arguments": {"path": "."}}]}
    scenario = Scenario.model_validate(
        {"name": "loop", "turns": [call, call, call, {"text": "done"}]}
    )
    session = tmp_path / "s.jsonl"
    runtime = build_runtime(
        RunOptions(
            scenario=scenario, workspace=tmp_path, max_turns=2, session=session, approve="all"
        )
    )
    await runtime.agent.prompt("go")
    messages = runtime.agent.state.messages
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
    ]
    assert runtime.turn_limit.reached
    assert [e.type for e in read_session(session).events].count("run_limit") == 1
    await runtime.agent.continue_()  # the transcript is valid: the run goes on from it
    assert not runtime.turn_limit.reached
    assert messages[-1].role == "assistant" and messages[-1].text == "done"


def test_the_readmes_three_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/your-agent.md: init, name your tools and model, run."""
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    (tmp_path / "agent_tools.py").write_text(
        "def add_task(title: str, due: str | None = None) -> str:\n"
        '    """Add a task to the list."""\n'
        '    return f"added {title}"\n',
        encoding="utf-8",
    )
    with ChatServer() as srv:
        toml = tmp_path / "workbench.toml"
        toml.write_text(
            toml.read_text(encoding="utf-8") + f'\nbase_url = "{srv.url}"\nmodel = "test-model"\n',
            encoding="utf-8",
        )
        srv.script(
            stream_reply(
                [*tool_call_chunks(0, "c1", "add_task", '{"title": "x"}'), finish("tool_calls")]
            ),
            text_reply(),
        )
        assert main(["--headless", "go", "--approve", "all", "--no-record"]) == 0
        body = srv.requests[0].json
    assert body["messages"][0]["content"].startswith("You are a careful assistant.")
    names = [t["function"]["name"] for t in body["tools"]]
    assert names[-1] == "add_task" and "read_file" in names
    assert "added x" in capsys.readouterr().out
