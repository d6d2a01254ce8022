"""Which MCP servers start and under what names: flags, the config file, naming,
and rules / breakpoints that name a whole server (no server is started here)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from workbench.cli.args import build_parser
from workbench.mcp.config import (
    McpServerConfig,
    load_mcp_json,
    load_mcp_servers,
    name_for_command,
    name_for_url,
    resolve_servers,
    server_from_command,
)
from workbench.mcp.tools import tool_name
from workbench.permissions import CallPattern, load_rules
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.stepper import Breakpoint


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("python servers/files.py", "files"),
        ("/usr/bin/python3.11 -m pkg.weather_server", "weather_server"),
        ("npx -y @modelcontextprotocol/server-memory@1.2.0", "server-memory"),
        ("uvx mcp-server-fetch --ignore-robots-txt", "mcp-server-fetch"),
        ("uv run my.server.py", "my-server"),
        ("docker run -i --rm mcp/github", "github"),
        ("/opt/tools/git__mcp", "git_mcp"),
        ("node", "node"),
        ("python3 -c 'print(1)'", "python3"),
        (
            "node /x/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio",
            "server-everything",
        ),
        ("node ./weather/build/index.js", "weather"),
        (
            "env LOG_LEVEL=debug npx -y @modelcontextprotocol/server-filesystem .",
            "server-filesystem",
        ),
        ("env -u HOME -i PATH=/bin uvx mcp-server-git", "mcp-server-git"),
        ("DEBUG=1 python servers/files.py", "files"),
    ],
)
def test_names_come_from_what_the_command_runs(command: str, name: str) -> None:
    assert name_for_command(shlex.split(command)) == name


def test_url_names_and_uniqueness() -> None:
    assert name_for_url("http://127.0.0.1:8000/mcp") == "127-0-0-1-8000"
    assert name_for_url("http://127.0.0.1:8001/mcp") == "127-0-0-1-8001"
    assert name_for_url("https://a.example/mcp") == "a-example"
    servers = resolve_servers(
        ["python a.py", "'python' 'a.py' --flag"], ["https://api.example.com/mcp"]
    )
    assert [s.name for s in servers] == ["a", "a-2", "api-example-com"]
    assert servers[1].command == ("python", "a.py", "--flag")
    assert servers[2].transport == "http" and servers[0].transport == "stdio"


def test_bad_flags_are_clear() -> None:
    with pytest.raises(ValueError, match="--mcp needs a command"):
        server_from_command("   ")
    with pytest.raises(ValueError, match="No closing quotation"):
        server_from_command("python 'oops")
    with pytest.raises(ValueError, match="Bad MCP server URL"):
        resolve_servers(urls=["ftp://x"])


def test_config_file_servers(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        """
default_profile = "x"
[profiles.x]
model = "m"

[mcp.servers.files]
command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "error" }

[mcp.servers."my tools"]
command = "python tools.py --fast"
startup_timeout = 5

[mcp.servers.remote]
url = "http://127.0.0.1:9/mcp"
headers = { Authorization = "Bearer t" }
""",
        encoding="utf-8",
    )
    servers = load_mcp_servers(config)
    assert [s.name for s in servers] == ["files", "my tools", "remote"]
    assert servers[1].command == ("python", "tools.py", "--fast")
    assert servers[1].startup_timeout == 5
    assert servers[0].env == {"LOG_LEVEL": "error"} and servers[2].headers
    resolved = resolve_servers(["python files.py"], configured=servers)
    assert [s.name for s in resolved] == ["files", "my-tools", "remote", "files-2"]
    assert load_mcp_servers(tmp_path / "missing.toml") == []
    with pytest.raises(ValueError, match="Config file not found"):
        load_mcp_servers(tmp_path / "missing.toml", required=True)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('command = ["x"]\nurl = "http://h/"', "either command or url"),
        ("", "either command or url"),
        ("command = []", "non-empty list"),
        ('url = "h:1"', "Bad MCP server URL"),
        ('command = "x"\ncolour = 1', "Extra inputs"),
    ],
)
def test_bad_config_tables_name_the_server(tmp_path: Path, table: str, message: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f"[mcp.servers.broken]\n{table}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"Bad MCP server 'broken' in .*{message}"):
        load_mcp_servers(config)


def test_tool_names_are_prefixed_clean_and_short() -> None:
    assert tool_name("files", "read_file") == "files__read_file"
    assert tool_name("files", "fs.read/all") == "files__fs_read_all"
    long = tool_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("server__xxx")
    assert long != tool_name("server", "x" * 99)


def test_cli_flags() -> None:
    args = build_parser().parse_args(
        ["--mcp", "python a.py --x", "--mcp", "b", "--mcp-url", "http://127.0.0.1:1/mcp"]
    )
    assert args.mcp == ["python a.py --x", "b"] and args.mcp_url == ["http://127.0.0.1:1/mcp"]


def test_build_runtime_makes_an_unstarted_hub_only_when_asked(tmp_path: Path) -> None:
    scenario = Scenario.model_validate({"name": "s", "turns": [{"text": "hi"}]})
    plain = build_runtime(RunOptions(scenario=scenario, workspace=tmp_path))
    assert plain.mcp is None
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            mcp=[f"{sys.executable} server.py"],
            mcp_urls=["http://127.0.0.1:1/mcp"],
            mcp_servers=[McpServerConfig(name="server", url="http://127.0.0.1:2/mcp")],
        )
    )
    assert [c.name for c in runtime.mcp.connections] == ["server", "server-2", "127-0-0-1-1"]
    assert all(c.status == "starting" for c in runtime.mcp.connections)


def test_rules_and_breakpoints_can_name_a_whole_server(tmp_path: Path) -> None:
    assert str(CallPattern.parse("mcp:files")) == "files__*"
    assert CallPattern.parse('mcp:files(path="src/**")').matches("files__read", {"path": "src/a"})
    rules = load_rules(
        tmp_path, deny=["mcp:files"], ask=["mcp:shell"], allow=["files__stat", "shell__ls", "mcp:*"]
    )
    assert rules.match("files__write", {}).action == "deny"  # type: ignore[union-attr]
    assert rules.match("files__stat", {}).action == "deny"  # type: ignore[union-attr]  # deny wins
    assert rules.match("shell__ls", {}).action == "allow"  # type: ignore[union-attr]
    assert rules.match("shell__rm", {}).action == "ask"  # type: ignore[union-attr]
    assert rules.match("other__thing", {}).action == "allow"  # type: ignore[union-attr]
    assert rules.match("run_command", {"command": "ls"}).action == "ask"  # type: ignore[union-attr]
    assert rules.match("files_like_builtin", {}).action == "ask"  # type: ignore[union-attr]
    bp = Breakpoint.parse("mcp:toolbox")
    assert bp.text == "toolbox__*" and bp.pattern is not None
    assert bp.pattern.matches("toolbox__slow_count", {}) and not bp.pattern.matches("slow", {})


def test_per_server_flags_apply_to_the_server_named_just_before() -> None:
    from workbench.cli.args import build_parser, parse
    from workbench.mcp.config import servers_from_flags

    args = parse(
        build_parser(),
        [
            "--mcp",
            "python a.py",
            "--mcp-env",
            "LOG=1",
            "--mcp-cwd",
            "/tmp",
            "--mcp-url",
            "http://127.0.0.1:8000/mcp",
            "--mcp-header",
            "Authorization: Bearer x",
            "--mcp-header",
            "X-A:1",
            "--mcp-timeout",
            "3",
            "--mcp",
            "python b.py",
        ],
    )
    a, url, b = servers_from_flags(args.mcp_specs)
    assert a.env == {"LOG": "1"} and a.cwd == "/tmp" and a.startup_timeout == 20
    assert url.headers == {"Authorization": "Bearer x", "X-A": "1"}
    assert url.startup_timeout == 3 and url.transport == "http"
    assert b.env == {} and b.command == ("python", "b.py")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mcp-header", "A: b"], "--mcp-header 'A: b' needs an MCP server flag before it"),
        (["--mcp", "x", "--mcp-header", "A: b"], "--mcp-header is for URL servers"),
        (["--mcp-url", "http://h/mcp", "--mcp-header", "no colon"], "expected 'NAME: VALUE'"),
        (["--mcp", "x", "--mcp-env", "NOEQUALS"], "expected NAME=VALUE"),
        (["--mcp", "x", "--mcp-timeout", "soon"], "expected a number of seconds"),
        (["--mcp", "x", "--mcp-timeout", "-1"], "startup_timeout"),
    ],
)
def test_per_server_flags_that_do_not_fit_say_why(argv: list[str], message: str) -> None:
    from workbench.cli.args import build_parser, parse
    from workbench.mcp.config import servers_from_flags

    with pytest.raises(ValueError, match=re.escape(message)):
        servers_from_flags(parse(build_parser(), argv).mcp_specs)


def test_the_mcp_servers_catalog_of_other_clients_imports(tmp_path: Path) -> None:
    from workbench.mcp.config import load_mcp_json

    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                        "env": {"LOG": "1"},
                    },
                    "remote": {
                        "url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer t"},
                    },
                    "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                    "off": {"command": "x", "disabled": True},
                }
            }
        ),
        encoding="utf-8",
    )
    files, remote, legacy, off = load_mcp_json(path)
    assert [files.enabled, off.enabled] == [True, False]  # kept, not started
    assert files.name == "files" and files.transport == "stdio" and files.env == {"LOG": "1"}
    assert files.command == ("npx", "-y", "@modelcontextprotocol/server-filesystem", ".")
    assert remote.transport == "http" and remote.headers == {"Authorization": "Bearer t"}
    assert legacy.transport == "sse"
    vscode = tmp_path / "vscode.json"
    vscode.write_text(
        '{"servers": {"git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}}}',
        encoding="utf-8",
    )
    assert [s.command for s in load_mcp_json(vscode)] == [("uvx", "mcp-server-git")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "Cannot read MCP config"),
        ('{"other": {}}', 'has no "mcpServers" object'),
        ('{"mcpServers": {"a": 1}}', "Bad MCP server 'a'"),
        ('{"mcpServers": {"a": {"args": []}}}', "needs command or url"),
        ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', "args must be a list"),
        ('{"mcpServers": {"a": {"url": "ftp://x"}}}', "Bad MCP server URL"),
    ],
)
def test_a_broken_catalog_says_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    from workbench.mcp.config import load_mcp_json

    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(message)):
        load_mcp_json(path)


def test_the_command_line_brings_config_catalog_and_flag_servers(tmp_path: Path) -> None:
    from workbench.cli.args import build_parser, parse
    from workbench.cli.run_options import _mcp_servers

    config = tmp_path / "config.toml"
    config.write_text('[mcp.servers.memo]\ncommand = ["python3", "m.py"]\n', encoding="utf-8")
    catalog = tmp_path / "mcp.json"
    catalog.write_text(
        '{"mcpServers": {"files": {"command": "python3", "args": ["f.py"]}}}', encoding="utf-8"
    )
    args = parse(
        build_parser(),
        [
            "--config",
            str(config),
            "--mcp-config",
            str(catalog),
            "--mcp-sse",
            "http://127.0.0.1:9/sse",
        ],
    )
    assert [(s.name, s.transport) for s in _mcp_servers(args)] == [
        ("memo", "stdio"),
        ("files", "stdio"),
        ("127-0-0-1-9", "sse"),
    ]


def test_mcp_json_variables_are_expanded_as_the_editors_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    (project / ".vscode").mkdir(parents=True)
    (project / ".env").write_text("# keys\nexport TOKEN='t0k'\nMODE=fast\n", encoding="utf-8")
    monkeypatch.setenv("MY_DIR", "/srv/data")
    path = project / ".vscode" / "mcp.json"
    entry = {
        "command": "${userHome}/bin/server",
        "args": ["${workspaceFolder}/src", "${env:MY_DIR}", "${LEVEL:-info}"],
        "env": {"MODE": "slow", "NAME": "${workspaceFolderBasename}"},
        "envFile": "${workspaceFolder}/.env",
    }
    path.write_text(json.dumps({"servers": {"s": entry}}), encoding="utf-8")
    (server,) = load_mcp_json(path)
    assert server.command == (
        f"{Path.home()}/bin/server",
        f"{project.resolve()}/src",
        "/srv/data",
        "info",
    )
    assert server.env == {"TOKEN": "t0k", "MODE": "slow", "NAME": "proj"}


def test_a_variable_the_workbench_moved_out_of_its_environment_is_still_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At start-up the workbench takes secret-named variables out of `os.environ`; a
    server configured with `${env:GITHUB_TOKEN}` still gets its token."""
    import os

    from workbench import secret_env

    monkeypatch.setenv("GITHUB_TOKEN", "ghp-for-the-test")
    monkeypatch.setattr(secret_env, "_held", {})
    secret_env.hold_environment(environ=os.environ)
    assert "GITHUB_TOKEN" not in os.environ
    path = tmp_path / "mcp.json"
    entry = {"command": "server", "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}}
    path.write_text(json.dumps({"servers": {"s": entry}}), encoding="utf-8")
    (server,) = load_mcp_json(path)
    assert server.env == {"GITHUB_TOKEN": "ghp-for-the-test"}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("${env:NOT_SET_HERE}", "${NOT_SET_HERE} names the environment variable NOT_SET_HERE"),
        ("${NOT_SET_HERE}", "which is not set"),
        ("${command:x}", "${command:x}: not a variable the workbench knows"),
    ],
)
def test_an_mcp_json_variable_that_cannot_be_had_is_an_error_not_sent_literally(
    tmp_path: Path, value: str, error: str
) -> None:
    path = tmp_path / "mcp.json"
    inputs = [{"id": "api-key", "type": "promptString", "description": "Your key"}]
    data = {"inputs": inputs, "mcpServers": {"s": {"command": "x", "env": {"K": value}}}}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError) as failed:
        load_mcp_json(path)
    assert str(failed.value).startswith("Bad MCP server 's' in ")
    assert error in str(failed.value)
