"""The project file: `workbench.toml` (or `[tool.workbench]` in pyproject.toml) names your
agent; flags override it; `workbench init` writes a starter and never overwrites one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from workbench.__main__ import main
from workbench.cli.args import build_parser
from workbench.cli.run_options import apply_project
from workbench.project.config import STARTER, find_project, load_project

TOOLS = '''
def shout(text: str) -> str:
    """Shout."""
    return text.upper()
'''

SCENARIO = {
    "name": "p",
    "prompt": "go",
    "turns": [
        {"tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]},
        {"tool_calls": [{"name": "shout", "arguments": {"text": "again"}}]},
        {"text": "ok"},
    ],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "prompt.md").write_text("From the file.", encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


WORKBENCH_TOML = """
tools = ["agent/tools.py"]
builtin_tools = "none"
system_prompt_file = "prompt.md"
scenario = "s.json"
max_turns = 1

[mcp.servers.memory]
command = ["python", "memory_server.py"]
env = { TOKEN = "x" }
"""


def parsed(argv: list[str], directory: Path) -> object:
    args = build_parser().parse_args(argv)
    apply_project(args, directory)
    return args


def test_the_project_file_fills_what_no_flag_gave(project: Path) -> None:
    (project / "workbench.toml").write_text(WORKBENCH_TOML, encoding="utf-8")
    args = parsed([], project)
    assert args.tool_specs == ["agent/tools.py"] and args.builtin_tools == []
    assert args.scenario == project / "s.json" and args.max_turns == 1
    assert args.system_prompt_file == project / "prompt.md"
    [server] = args.project_mcp
    assert server.name == "memory" and server.command == ("python", "memory_server.py")
    flags = parsed(
        ["--max-turns", "5", "--system-prompt", "Flag.", "--builtin-tools", "read_file"], project
    )
    assert flags.max_turns == 5 and flags.system_prompt == "Flag."
    assert flags.system_prompt_file is None and flags.builtin_tools == ["read_file"]


def test_a_bare_workbench_runs_the_projects_agent(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKBENCH_TOML.split("[mcp")[0]
    (project / "workbench.toml").write_text(text, encoding="utf-8")
    assert main(["--headless", "--approve", "all", "--no-record"]) == 4  # max_turns = 1
    out = capsys.readouterr().out
    assert "│ HI" in out and "again" not in out and "--max-turns 1" in out


def test_pyproject_tool_workbench_is_read_too(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.workbench]\ntools = ["agent/tools.py"]\nmax_turns = 2\n',
        encoding="utf-8",
    )
    config = find_project(project)
    assert config is not None and config.tools == ["agent/tools.py"] and config.max_turns == 2
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert find_project(project) is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("tool = ['x.py']\n", "unknown key 'tool'; did you mean 'tools'?"),
        ("max_turns = 0\n", "max_turns: Input should be greater than or equal to 1"),
        ("tools = [\n", "Cannot read"),
    ],
)
def test_a_bad_project_file_is_one_line_and_exit_2(
    project: Path, text: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "workbench.toml").write_text(text, encoding="utf-8")
    assert main(["--headless", "go", "--no-record"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "workbench.toml" in err and "Traceback" not in err


def test_init_writes_a_starter_that_loads_and_never_overwrites(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init"]) == 0
    path = project / "workbench.toml"
    assert path.read_text(encoding="utf-8") == STARTER
    import tomllib

    config = load_project(path, tomllib.loads(STARTER))
    assert config.tools == ["agent_tools.py"] and config.max_turns == 10
    path.write_text("# mine\n", encoding="utf-8")
    assert main(["init"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "# mine\n"


def test_the_starter_documents_every_key() -> None:
    from workbench.project.config import ProjectConfig

    keys = set(ProjectConfig.model_fields) - {"path"}
    missing = [
        k
        for k in keys
        if f"{k} =" not in STARTER and f"[{k}." not in STARTER and f"[{k}]" not in STARTER
    ]
    assert not missing, missing
    assert textwrap.dedent(STARTER) == STARTER


def test_the_project_file_can_name_an_mcp_servers_catalog(project: Path) -> None:
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "server-filesystem"]}}}',
        encoding="utf-8",
    )
    text = WORKBENCH_TOML.replace(
        "[mcp.servers.memory]", '[mcp]\nconfig = ".cursor/mcp.json"\n\n[mcp.servers.memory]'
    )
    (project / "workbench.toml").write_text(text, encoding="utf-8")
    names = [s.name for s in parsed([], project).project_mcp]
    assert names == ["memory", "files"]
