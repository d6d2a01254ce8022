"""`workbench acp [options] -- AGENT_COMMAND ARGS...`: any ACP agent in the workbench.

The agent runs as a subprocess speaking the Agent Client Protocol over its stdio;
the app (or `--headless PROMPT`) shows its messages and tool calls, its permission
requests go through the rules and the permission dialog, and the run is recorded
as a session like any other (docs/acp.md). Without a command after `--`, the
`[acp]` table of the project file (`workbench.toml`) names the agent.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workbench.cli.args import McpSpec, Parser, add_rule_flags, add_step_flags, approve_of
from workbench.sanitize import literal


class AcpTable(BaseModel):
    """The `[acp]` table of the project file."""

    model_config = ConfigDict(extra="forbid")

    command: list[str]
    """The agent's program (a command line string is split as a shell would)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    mode: str | None = None
    proxy: bool = False
    """The agent's model requests through a workbench proxy, shown with the run."""
    proxy_upstream: str | None = None

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value


def acp_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench acp",
        description=(
            "Open an ACP (Agent Client Protocol) agent in the workbench: "
            "workbench acp -- npx @zed-industries/claude-code-acp. Its tool calls are shown, "
            "its permission requests judged by your rules or asked in the dialog, and the "
            "run recorded as a session (workbench replay FILE)."
        ),
        epilog="Without a command after --, the [acp] table of ./workbench.toml names the agent.",
    )
    parser.add_argument(
        "--headless",
        metavar="PROMPT",
        help="send PROMPT, print the run and record it, without the app. Exit code: 0 "
        "finished, 1 error, 2 bad input, 3 finished but the session is incomplete, 130 aborted",
    )
    parser.add_argument(
        "--workspace", type=Path, metavar="DIR", help="the agent's cwd (default: here)"
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a variable for the agent's process (repeatable)",
    )
    parser.add_argument("--mode", metavar="ID", help="switch the agent to this mode at start")
    parser.add_argument(
        "--load-session", metavar="ID", help="resume the agent's session ID (session/load)"
    )
    parser.add_argument(
        "--auth", metavar="METHOD", help="the agent's authenticate method, when it asks for one"
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="a variable terminals the agent opens get beyond the allow-list (repeatable)",
    )
    model = parser.add_argument_group("the agent's model traffic")
    model.add_argument(
        "--proxy",
        action="store_true",
        help="start a workbench proxy in front of the agent's model and point the agent at it "
        "(ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL): its model requests "
        "are shown in the network view (F4) and recorded with the run",
    )
    model.add_argument(
        "--proxy-upstream",
        metavar="URL",
        help="the model's real base URL behind the proxy, e.g. https://api.anthropic.com/v1 "
        "(default: the agent's own base URL variable)",
    )
    perms = parser.add_argument_group("permissions")
    add_rule_flags(perms, rules_default="<workspace>/.workbench/rules.toml")
    add_step_flags(
        parser,
        step_help="start in step mode (calls the agent asks about are held)",
        break_help="breakpoint: a tool name or an argument pattern (repeatable)",
    )
    mcp = parser.add_argument_group("MCP servers passed to the agent (session/new)")
    mcp.add_argument("--mcp", action=McpSpec, default=[], metavar="'COMMAND ARGS'")
    mcp.add_argument("--mcp-url", action=McpSpec, default=[], metavar="URL")
    mcp.add_argument("--config", type=Path, metavar="FILE", help="config file: [mcp.servers]")
    rec = parser.add_argument_group("sessions")
    rec.add_argument("--session", type=Path, metavar="FILE", help="the session file to write")
    rec.add_argument("--no-record", action="store_true", help="do not record a session file")
    return parser


def acp_main(argv: list[str]) -> int:
    from workbench.acp import AcpOptions

    own, command = _split_command(argv)
    parser = acp_parser()
    args = parser.parse_args(own)
    approve = approve_of(parser, args, args.headless is not None)
    try:
        options = AcpOptions(
            **_agent(command, args),
            workspace=(args.workspace or Path.cwd()).resolve(),
            approve=approve,  # type: ignore[arg-type]
            rules_file=args.rules,
            allow=args.allow,
            ask=args.ask,
            deny=args.deny,
            step=args.step,
            breakpoints=args.breakpoints,
            load_session=args.load_session,
            auth=args.auth,
            mcp_servers=_mcp_servers(args),
            pass_env=args.pass_env,
            record=not args.no_record,
            session=args.session,
        )
        if not options.workspace.is_dir():
            raise ValueError(f"--workspace {options.workspace} is not a directory")
        from workbench.acp import AcpRun

        run = AcpRun(options)
    except (OSError, ValueError) as exc:
        _say(str(exc))
        return 2
    if run.runtime.session_path is not None:
        _say(f"recording the session to {run.runtime.session_path}")
    if args.headless is not None:
        return anyio.run(headless, run, args.headless)
    from workbench.widgets.acp_app import AcpApp

    app = AcpApp(run)
    code = app.run() or 0
    if app.failure is not None:
        _say(app.failure)
        return 2
    return _recorded(run, code)


async def headless(run: Any, prompt: str) -> int:
    from workbench.acp import AcpError
    from workbench.cli.headless import run_headless

    try:
        async with run.connected():
            code = await run_headless(run.runtime, prompt)
    except AcpError as exc:
        _say(str(exc))
        return 2
    return _recorded(run, code)


def _recorded(run: Any, code: int) -> int:
    from workbench.cli.headless import recording_exit_code, say_recording_problem

    recorder = run.runtime.recorder
    for problem in recorder.problems if recorder else ():
        say_recording_problem(problem)
    path = run.runtime.session_path
    if path is not None and path.exists():
        _say(f"session recorded to {path}")
    return recording_exit_code(run.runtime, code)


def _split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1 :]
    return argv, []


def _agent(command: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """The agent's command, environment and mode: after `--`, else `[acp]`."""
    env = dict(_pair(item) for item in args.env)
    table = _table()
    proxy = {"proxy": args.proxy or args.proxy_upstream is not None}
    proxy["proxy_upstream"] = args.proxy_upstream
    if command:
        return {"command": command, "env": env, "mode": args.mode, **proxy}
    if table is None:
        raise ValueError(
            "no agent: give its command after -- (workbench acp -- AGENT ARGS...) or "
            "write an [acp] table in workbench.toml"
        )
    return {
        "command": [*table.command, *table.args],
        "env": {**table.env, **env},
        "mode": args.mode or table.mode,
        "proxy": proxy["proxy"] or table.proxy or table.proxy_upstream is not None,
        "proxy_upstream": args.proxy_upstream or table.proxy_upstream,
    }


def _table() -> AcpTable | None:
    from workbench.project.config import find_project

    project = find_project(Path.cwd())
    if project is None or project.acp is None:
        return None
    try:
        return AcpTable.model_validate(project.acp)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"{project.path}: acp.{where}: {err['msg']}") from None


def _pair(item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name:
        raise ValueError(f"--env {item!r}: give NAME=VALUE")
    return name, value


def _mcp_servers(args: argparse.Namespace) -> list[Any]:
    from workbench.config_file import default_config_path
    from workbench.mcp.config import load_mcp_servers, servers_from_flags
    from workbench.project.config import find_project

    servers = load_mcp_servers(
        args.config or default_config_path(), required=args.config is not None
    )
    project = find_project(Path.cwd())
    if project is not None:
        servers += project.mcp_servers()
    return servers + servers_from_flags(getattr(args, "mcp_specs", None) or [])


def _say(text: str) -> None:
    print(f"workbench acp: {literal(text)}", file=sys.stderr)
