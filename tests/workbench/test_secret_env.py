"""The workbench's own process shows no secret to the commands it runs.

A command's environment is allow-listed, but `/proc/$PPID/environ`, `ps eww` and
`/proc/$PPID/cmdline` are the workbench's own. The real workbench runs here (headless,
a scripted model or a local chat server) with a fake key given each way a user gives
one, and the model's command reads the parent's environment and arguments in
spellings redaction cannot see (base64), and in spellings it must (pieces, reversed).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.chat_server import (
    ChatServer,
    finish,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from workbench.redact import PIECE

KEY = "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4n"

# What the model runs: the parent's environment and arguments, each encoded so that
# redaction cannot hide a leak (the test decodes them), then plain spellings that
# give a key back in pieces.
READ_PARENT = "; ".join(
    [
        "echo ENV:$(base64 -w0 /proc/$PPID/environ)",
        "echo CMD:$(base64 -w0 /proc/$PPID/cmdline)",
        "echo UP:$(base64 -w0 /proc/$PPID/task/$PPID/environ)",
        "echo PS:$(ps eww -o args= -p $PPID | base64 -w0)",
        "echo DOT:$(base64 -w0 /proc/self/../$PPID/environ)",
        "tr '\\0' '\\n' < /proc/$PPID/environ | grep -i key | cut -c1-30",
        "tr '\\0' '\\n' < /proc/$PPID/environ | grep -i key | rev",
        "tr '\\0' '\\n' < /proc/$PPID/environ | fold -w 4",
    ]
)


def decoded_reads(text: str) -> dict[str, bytes]:
    """What each `LABEL:base64` line of the command's output decodes to."""
    found = dict(re.findall(r"^(ENV|CMD|UP|PS|DOT):(\S*)$", text, re.M))
    return {label: base64.b64decode(data) for label, data in found.items()}


def assert_no_piece(text: str, key: str = KEY) -> None:
    for at in range(len(key) - PIECE + 1):
        piece = key[at : at + PIECE]
        assert piece not in text and piece[::-1] not in text, piece


def workbench(
    tmp_path: Path, *args: str, env: dict[str, str], config: str = ""
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Runs the real workbench headless; returns the process and its session file's text."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    session = tmp_path / "session.jsonl"
    config_file = tmp_path / "config.toml"
    config_file.write_text(config)
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench",
            "--headless",
            "go",
            "--approve",
            "all",
            "--workspace",
            str(workspace),
            "--session",
            str(session),
            "--config",
            str(config_file),
            *args,
        ],
        capture_output=True,
        text=True,
        env={**base, "WORKBENCH_SESSIONS_DIR": str(tmp_path / "sessions"), **env},
        timeout=60,
        check=False,
    )
    return run, session.read_text() if session.exists() else ""


def command_output(session_text: str) -> str:
    """The text of the run_command result recorded in the session."""
    for line in session_text.splitlines():
        record = json.loads(line)
        event = record.get("event", record)
        if event.get("type") == "tool_execution_end":
            return "".join(
                block.get("text", "") for block in event["result"]["content"] if "text" in block
            )
    raise AssertionError("no tool result recorded")


def check(run: subprocess.CompletedProcess[str], session_text: str) -> None:
    assert run.returncode == 0, run.stderr
    output = command_output(session_text)
    reads = decoded_reads(output)
    assert set(reads) == {"ENV", "CMD", "UP", "PS", "DOT"}, output[:2000]
    assert b"PATH=" in reads["ENV"]  # it did read the workbench's environment
    assert b"workbench" in reads["CMD"]  # and its command line
    for label, data in reads.items():
        assert KEY.encode() not in data, label
        assert_no_piece(data.decode("utf-8", "replace"))
    for text in (session_text, run.stdout, run.stderr):
        assert_no_piece(text)


def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.json"
    turns = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": READ_PARENT}}]},
        {"text": "done"},
    ]
    path.write_text(json.dumps({"name": "read-parent", "turns": turns}))
    return path


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "MY_API_KEY"])
def test_a_secret_in_the_environment_is_not_in_the_workbenchs(tmp_path: Path, name: str) -> None:
    run, session = workbench(tmp_path, "--scenario", str(scenario_file(tmp_path)), env={name: KEY})
    check(run, session)


def serve_the_command(server: ChatServer) -> None:
    arguments = json.dumps({"command": READ_PARENT})
    server.script(
        stream_reply(
            [*tool_call_chunks(0, "call_1", "run_command", arguments), finish("tool_calls")]
        ),
        stream_reply([*text_chunks("done"), finish("stop")]),
    )


def test_a_key_given_on_the_command_line_is_not_in_the_workbenchs(tmp_path: Path) -> None:
    with ChatServer() as server:
        serve_the_command(server)
        run, session = workbench(
            tmp_path,
            "--base-url",
            server.url,
            "--model",
            "test-model",
            "--api-key",
            KEY,
            env={},
        )
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # still used
    check(run, session)


def test_a_profiles_key_variable_of_any_name_is_not_in_the_workbenchs(tmp_path: Path) -> None:
    config = '[profiles.local]\nmodel = "test-model"\napi_key_env = "LOCAL_LLM"\n'
    with ChatServer() as server:
        serve_the_command(server)
        run, session = workbench(
            tmp_path,
            "--profile",
            "local",
            "--base-url",
            server.url,
            env={"LOCAL_LLM": KEY},
            config=config,
        )
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    check(run, session)


def test_a_passed_on_secret_still_reaches_the_command(tmp_path: Path) -> None:
    """`--pass-env` works on the held value: the user asked for it (and it is redacted)."""
    path = tmp_path / "scenario.json"
    turns = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo ${#GH_TOKEN}"}}]},
        {"text": "done"},
    ]
    path.write_text(json.dumps({"name": "pass", "turns": turns}))
    run, session = workbench(
        tmp_path, "--scenario", str(path), "--pass-env", "GH_TOKEN", env={"GH_TOKEN": KEY}
    )
    assert run.returncode == 0, run.stderr
    assert command_output(session).strip() == str(len(KEY))


# -- in one process ---------------------------------------------------------------------


@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's held values and ownership, empty for the test."""
    from workbench import secret_env

    monkeypatch.setattr(secret_env, "_held", {})
    monkeypatch.setattr(secret_env, "_owner", False)


@pytest.mark.usefixtures("fresh_state")
def test_held_variables_stay_readable_through_environment() -> None:
    from workbench.secret_env import environment, held, hold_environment

    env = {"PATH": "/bin", "GH_TOKEN": KEY, "LOCAL_LLM": "other-value-123", "HOME": "/h"}
    moved = hold_environment(["LOCAL_LLM"], environ=env)
    assert moved == ["GH_TOKEN", "LOCAL_LLM"]
    assert env == {"PATH": "/bin", "HOME": "/h"}
    assert held() == {"GH_TOKEN": KEY, "LOCAL_LLM": "other-value-123"}
    assert environment()["GH_TOKEN"] == KEY


@pytest.mark.usefixtures("fresh_state")
def test_an_embedding_program_keeps_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `hold_environment` on the process's own environment, learning a value
    takes nothing out of `os.environ` (the program's own)."""
    from workbench.secret_env import hold_values, take

    monkeypatch.setenv("LOCAL_LLM", KEY)
    hold_values([KEY])
    assert os.environ["LOCAL_LLM"] == KEY
    assert take("LOCAL_LLM") == KEY and os.environ["LOCAL_LLM"] == KEY


def run_python(code: str, env: dict[str, str], *args: str) -> str:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**base, "PYTHONPATH": str(root), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


PARENT_SEES = """
import os, subprocess
def child(command, env=None):
    return subprocess.run(["sh", "-c", command], capture_output=True, env=env).stdout
"""


def test_a_later_value_leaves_the_environment_and_the_arguments() -> None:
    """A key learned after start-up (a profile's variable of any name, `--api-key`):
    out of `os.environ`, the environment area and the argument area."""
    code = (
        PARENT_SEES
        + """
from workbench.secret_env import hold_environment, hold_values, environment
hold_environment()
hold_values([os.environ["LOCAL_LLM"]])
print("os.environ:", "LOCAL_LLM" in os.environ, environment()["LOCAL_LLM"] == os.sys.argv[2])
print("environ:", child("cat /proc/$PPID/environ"))
print("cmdline:", child("cat /proc/$PPID/cmdline"))
"""
    )
    out = run_python(code, {"LOCAL_LLM": KEY, "PLAIN": "kept"}, "--api-key", KEY)
    assert "os.environ: False True" in out
    assert KEY not in out
    assert "PLAIN=kept" in out and "--api-key" in out


def test_an_embedding_program_hides_its_secrets_from_its_childrens_view() -> None:
    """`attach` (run_app, run_headless): the initial environment area is overwritten,
    the program's own `os.environ` and its children's environment keep the key."""
    code = (
        PARENT_SEES
        + """
from workbench.agent import Agent
from workbench.embed import attach
from workbench.providers.scripted import Scenario, ScriptedProvider
provider = ScriptedProvider(Scenario.model_validate({"name": "s", "turns": [{"text": "hi"}]}))
agent = Agent(stream_fn=provider, model=provider.model)
with attach(agent, record=False):
    print("own:", os.environ["GH_TOKEN"] == os.sys.argv[1])
    print("parent's:", child("cat /proc/$PPID/environ"))
    print("inherited:", child("echo $GH_TOKEN") == (os.sys.argv[1] + "\\n").encode())
"""
    )
    out = run_python(code, {"GH_TOKEN": KEY}, KEY)
    assert "own: True" in out and "inherited: True" in out
    parents = out.split("parent's:", 1)[1].split("inherited:", 1)[0]
    assert KEY not in parents and "GH_TOKEN=" in parents


AGENT_FILE = """
import base64, os, subprocess
from workbench.agent import Agent, tool
from workbench.providers.scripted import Scenario, ScriptedProvider

@tool
def peek() -> str:
    '''What a child of the workbench sees of it, and what this agent's own code sees.'''
    parent = subprocess.run(
        ["sh", "-c", "cat /proc/$PPID/environ"], capture_output=True
    ).stdout
    inherited = subprocess.run(
        ["sh", "-c", 'test "$OPENAI_API_KEY" = "$EXPECTED" && echo yes'], capture_output=True
    ).stdout
    return f"OWN:{os.environ.get('OPENAI_API_KEY') == os.environ.get('EXPECTED')} " + (
        f"INHERITED:{inherited.strip().decode()} PARENT:" + base64.b64encode(parent).decode()
    )

turns = [{"tool_calls": [{"name": "peek", "arguments": {}}]}, {"text": "done"}]
provider = ScriptedProvider(Scenario.model_validate({"name": "s", "turns": turns}))
agent = Agent(stream_fn=provider, model=provider.model, tools=[peek])
"""


def test_workbench_run_keeps_your_agents_environment_but_hides_it_from_children(
    tmp_path: Path,
) -> None:
    (tmp_path / "my_agent.py").write_text(AGENT_FILE)
    session = tmp_path / "s.jsonl"
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    run = subprocess.run(
        [sys.executable, "-m", "workbench", "run", "my_agent.py:agent", "--headless", "go"]
        + ["--approve", "all", "--session", str(session)],
        cwd=tmp_path,
        env={**base, "OPENAI_API_KEY": KEY, "EXPECTED": KEY},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    output = command_output(session.read_text())
    assert "OWN:True" in output  # the agent's own code still reads its key
    assert "INHERITED:yes" in output  # and so do the processes it starts
    parent = base64.b64decode(output.split("PARENT:", 1)[1].split()[0])
    assert b"OPENAI_API_KEY=" in parent and KEY.encode() not in parent
