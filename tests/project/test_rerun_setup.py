"""`rerun` and a fork rebuild the recorded agent: its `--tools` and its MCP servers
(recorded without secrets). Only a setup signed by this user's key is started by
default: a session file someone hands you never runs their code unasked."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.session_runs import ForkChoice, ForkRequest, fork_options
from workbench.sessions.reader import read_session

TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"

MY_TOOLS = '''
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''

ORDER = {"customer": "Ann", "items": [{"sku": "WID", "quantity": 2}], "priority": "low"}
RULES = (
    '[[rule]]\nmatch = "add"\naction = "allow"\n\n'
    '[[rule]]\nmatch = "mcp:toolbox"\naction = "allow"\n'
)
SCENARIO = {
    "name": "mixed",
    "prompt": "go",
    "workspace_files": {},
    "turns": [
        {
            "tool_calls": [
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "toolbox__place_order", "arguments": {"order": ORDER}},
            ]
        },
        {"text": "done"},
    ],
}


def own_rules(directory: Path) -> None:
    """The user's rules, in the directory they run the workbench from (a scenario can
    not bring rules: `workbench.scratch.seed` refuses `.workbench/`)."""
    (directory / ".workbench").mkdir(exist_ok=True)
    (directory / ".workbench" / "rules.toml").write_text(RULES, encoding="utf-8")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session of a run with --tools and an MCP server (with env and a secret header),
    recorded once for the module (starting the server is the slow part)."""
    tmp_path = tmp_path_factory.mktemp("recorded")
    own_rules(tmp_path)
    (tmp_path / "my_tools.py").write_text(MY_TOOLS, encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(
        "[mcp.servers.toolbox]\n"
        f"command = {json.dumps([sys.executable, str(TOOLBOX)])}\n"
        'env = { SECRET_TOKEN = "hunter2" }\n',
        encoding="utf-8",
    )
    session = tmp_path / "run.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        patch.setenv("WORKBENCH_SESSIONS_DIR", str(tmp_path / "sessions"))
        code = main(
            [
                "--headless",
                "--scenario",
                "s.json",
                "--tools",
                "my_tools.py",
                "--config",
                str(config),
                "--session",
                str(session),
                "--rules",
                ".workbench/rules.toml",
            ]
        )
    assert code == 0
    return session


@pytest.fixture(autouse=True)
def same_key(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests re-run as the user who recorded (their key is next to their sessions)."""
    monkeypatch.setenv("WORKBENCH_SESSIONS_DIR", str(recorded.parent / "sessions"))


def test_the_header_records_how_to_build_the_agent_but_no_secret(recorded: Path) -> None:
    text = recorded.read_text(encoding="utf-8")
    assert "hunter2" not in text and "SECRET_TOKEN" not in text
    setup = read_session(recorded).header.setup
    assert setup is not None and setup.tool_specs == ["my_tools.py"]
    assert setup.project_dir == str(recorded.parent.resolve())
    [server] = setup.mcp_servers
    assert server.name == "toolbox" and server.command == [sys.executable, str(TOOLBOX)]
    assert setup.signature


def test_rerun_with_no_flags_reproduces_tools_and_mcp(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    own_rules(elsewhere)
    monkeypatch.chdir(elsewhere)  # specs resolve from the record
    assert main(["rerun", str(recorded)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "add" in out and "toolbox__place_order" in out
    assert "2 calls: 2 same; every result is the same" in out
    assert "not found" not in out


def test_a_session_not_signed_by_you_starts_nothing_unless_trusted(
    recorded: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = recorded.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    evil = tmp_path / "evil-ran"
    header["setup"]["mcp_servers"] = [{"name": "toolbox", "command": ["sh", "-c", f"touch {evil}"]}]
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert main(["rerun", str(forged)]) == 1
    out = capsys.readouterr().out
    assert "not recorded by your workbench" in out and "--trust-recorded-tools" in out
    assert not evil.exists()
    options = fork_options(read_session(forged), ForkRequest(1, ForkChoice("scripted")))
    assert options.tool_specs == [] and options.mcp_servers == []


def test_flags_replace_the_recorded_tools(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    own_rules(tmp_path)
    (tmp_path / "other.py").write_text(
        'def add(a: int, b: int) -> int:\n    """Add, badly."""\n    return a - b\n',
        encoding="utf-8",
    )
    assert (
        main(
            [
                "rerun",
                str(recorded),
                "--tools",
                "other.py",
                "--mcp",
                shlex.join([sys.executable, str(TOOLBOX)]),
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "-5" in out and "+-1" in out  # the result of the replacing tool differs


def test_a_fork_rebuilds_the_recorded_agent(recorded: Path) -> None:
    options = fork_options(read_session(recorded), ForkRequest(1, ForkChoice("scripted")))
    assert options.tool_specs == ["my_tools.py"]
    assert options.project_dir == recorded.parent.resolve()
    assert [s.name for s in options.mcp_servers] == ["toolbox"]


async def test_an_mcp_tool_named_like_yours_is_refused_with_both_origins(tmp_path: Path) -> None:
    from workbench.agent import Agent, Model
    from workbench.mcp import McpHub, McpServerConfig
    from workbench.project import load_tools
    from workbench.providers.scripted import Scenario, ScriptedProvider

    (tmp_path / "mine.py").write_text(
        'def toolbox__fail(reason: str) -> str:\n    """Mine."""\n    return reason\n',
        encoding="utf-8",
    )
    tools = load_tools(["mine.py"], tmp_path)
    provider = ScriptedProvider(Scenario.model_validate({"name": "x", "turns": [{"text": "hi"}]}))
    agent = Agent(stream_fn=provider, model=Model(id="m"), tools=tools)
    hub = McpHub([McpServerConfig(name="toolbox", command=[sys.executable, str(TOOLBOX)])])
    async with hub.attach(agent):
        names = [t.name for t in agent.state.tools]
        assert names.count("toolbox__fail") == 1 and agent.state.tools[0].source == "file mine.py:1"
        assert hub.report()[-1] == (
            "MCP server toolbox: tool toolbox__fail not added: the name is taken by file mine.py:1"
        )
