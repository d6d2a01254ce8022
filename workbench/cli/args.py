"""The `workbench` command's flags."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from workbench import __version__


class McpSpec(argparse.Action):
    """Appends to its own list and, in command-line order, to `mcp_specs`: the
    per-server flags (`--mcp-header`, ...) apply to the server named just before."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])
        specs = getattr(namespace, "mcp_specs", None) or []
        namespace.mcp_specs = [*specs, (option, values)]


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake costs one line, not the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench",
        description=(
            "Agent Workbench: watch, step through and steer an LLM agent's tool calls. "
            "With no arguments, outside a project, it opens the app on the built-in demo "
            "scenario, in a fresh scratch workspace, with the scripted model (no key "
            "needed); `workbench demo` runs the demo anywhere. The first word names a "
            "command; a one-word prompt goes after -- (workbench -- hi)."
        ),
        epilog=(
            "Every run is recorded to a session file (one JSON line per event). Sessions: "
            "`workbench replay FILE` steps through one (and forks it), `workbench rerun FILE` "
            "re-runs its tool calls against the real tools and reports what differs, "
            "`workbench export FILE --format md|json` writes a transcript, "
            "`workbench sessions --list | --search TEXT` finds one, "
            "`workbench diff A B` compares two, "
            "`workbench restore FILE --turn N --to DIR` writes its files as they were then. "
            "`workbench proxy --upstream URL` debugs any agent that talks to an "
            "OpenAI-compatible API (docs/proxy.md). "
            "`workbench acp -- AGENT ARGS` opens an ACP agent (docs/acp.md). "
            "Your own agent: `workbench init` writes a workbench.toml here, "
            "`workbench run FILE.py:NAME` opens an Agent you built in Python. "
            "Each has its own --help."
        ),
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    parser.add_argument(
        "--headless",
        nargs="?",
        const="",
        metavar="PROMPT",
        help="run once without the app and print the event stream; PROMPT defaults to the "
        "scenario's own. Exit code: 0 finished, 1 error, 2 bad input, 3 finished but the "
        f"session could not be recorded whole, {EXIT_MAX_TURNS} stopped by --max-turns, "
        "130 aborted",
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        metavar="PROMPT",
        help="the first message, anywhere on the line: sent at once with --headless, "
        "put in the message box in the app",
    )
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help="with --headless: print the event stream as JSON lines on stdout "
        "(one event a line, as in a session file) instead of the readable log",
    )
    run = parser.add_argument_group("run")
    run.add_argument(
        "--scenario",
        default=None,
        metavar="FILE",
        help="scripted scenario: a JSON file or a built-in name (default: demo)",
    )
    run.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="directory the tools work in (default: a fresh scratch copy of the scenario's files)",
    )
    run.add_argument(
        "--pace",
        type=float,
        default=None,
        metavar="CPS",
        help="scripted streaming speed in characters per second, 0 for instant "
        "(default: 400 in the app, instant headless)",
    )
    perms = parser.add_argument_group(
        "permissions",
        "Rules allow, ask or deny by tool and argument pattern, e.g. "
        'run_command(command="pytest *") or write_file(path="src/**"). '
        "Defaults: reading tools allowed; writing and running ask.",
    )
    add_rule_flags(perms, rules_default="WORKSPACE/.workbench/rules.toml")
    perms.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass the environment variable NAME to run_command (repeatable; commands get "
        "only PATH, HOME, USER, SHELL, LANG, LC_*, TERM, TMPDIR and the like by default; "
        "also [commands] pass_env in the config file)",
    )
    add_step_flags(
        parser,
        step_help="start in step mode (pause at every point)",
        break_help="breakpoint: a tool name, an argument pattern, @invalid (or one stage: "
        "@parse, @unknown, @prepare, @validate) or @error (repeatable)",
    )
    sessions = parser.add_argument_group("session recording")
    sessions.add_argument(
        "--session",
        type=Path,
        metavar="FILE",
        help="record the session to FILE, which must not exist "
        "(default: a new file under the user's data directory, agent-workbench/sessions)",
    )
    sessions.add_argument("--no-record", action="store_true", help="do not record a session file")
    mcp = parser.add_argument_group(
        "MCP servers",
        "Tools from Model Context Protocol servers join the built-in ones as SERVER__TOOL "
        "(permission rules and breakpoints may name a whole server: mcp:SERVER). Servers "
        "can also be listed in the config file as [mcp.servers.NAME] tables.",
    )
    mcp.add_argument(
        "--mcp",
        action=McpSpec,
        default=[],
        metavar="'COMMAND ARGS'",
        help="start a stdio MCP server, e.g. --mcp 'npx -y @modelcontextprotocol/server-memory' "
        "(one quoted command line; repeatable)",
    )
    mcp.add_argument(
        "--mcp-url",
        action=McpSpec,
        default=[],
        metavar="URL",
        help="connect to a streamable-HTTP MCP server, e.g. http://127.0.0.1:8000/mcp (repeatable)",
    )
    mcp.add_argument(
        "--mcp-sse",
        action=McpSpec,
        default=[],
        metavar="URL",
        help="connect to an MCP server over the older HTTP+SSE transport, e.g. "
        "http://127.0.0.1:8000/sse (repeatable)",
    )
    for flag, metavar, about in (
        ("--mcp-header", "'NAME: VALUE'", "an HTTP header for it, e.g. 'Authorization: Bearer …'"),
        ("--mcp-env", "NAME=VALUE", "an environment variable for its process"),
        ("--mcp-cwd", "DIR", "the working directory of its process"),
        ("--mcp-timeout", "SECONDS", "how long it may take to start (default 20)"),
    ):
        mcp.add_argument(
            flag,
            action=McpSpec,
            default=[],
            metavar=metavar,
            help=f"for the MCP server named just before: {about} (repeatable)",
        )
    mcp.add_argument(
        "--mcp-log-level",
        choices=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
        metavar="LEVEL",
        help="the least severe log lines MCP servers should send (debug ... emergency); "
        "they are kept per server",
    )
    mcp.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE",
        help="MCP servers from a JSON file in the mcpServers format of Claude Desktop, "
        "Cursor and VS Code (repeatable)",
    )
    view = parser.add_argument_group("view")
    view.add_argument(
        "--slow-after",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="a running call's elapsed time turns into a warning after this long (default 10)",
    )
    view.add_argument(
        "--capture-chunks",
        action="store_true",
        help="keep each model response's raw streamed chunks for the network view (F4)",
    )
    add_agent_arguments(parser)
    add_provider_arguments(parser)
    return parser


EXIT_MAX_TURNS = 4
"""Headless exit code of a run that `--max-turns` stopped."""


def add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """Your own agent: tools, built-ins, system prompt, limits (all default to "not given",
    so a project file's values apply unless a flag overrides them)."""
    agent = parser.add_argument_group(
        "your agent",
        "Debug your own tools and prompt. A workbench.toml in the current directory (or "
        "[tool.workbench] in its pyproject.toml) can set all of these; flags override it.",
    )
    agent.add_argument(
        "--tools",
        dest="tool_specs",
        action="append",
        default=None,
        metavar="SPEC",
        help="load your tools from a Python file or module: ./agent_tools.py, mypkg.tools, "
        "agent_tools.py:TOOLS (AgentTools, @tool functions, lists of them, or functions "
        "with type hints; repeatable)",
    )
    agent.add_argument(
        "--builtin-tools",
        type=builtin_names,
        metavar="NAMES|none",
        help="which built-in tools to offer, comma-separated (default: all six)",
    )
    prompt = agent.add_mutually_exclusive_group()
    prompt.add_argument("--system-prompt", metavar="TEXT", help="the system prompt")
    prompt.add_argument(
        "--system-prompt-file", type=Path, metavar="FILE", help="read the system prompt from FILE"
    )
    agent.add_argument(
        "--max-turns",
        type=positive_int,
        metavar="N",
        help=f"stop each run cleanly after N model turns (headless exit code {EXIT_MAX_TURNS})",
    )
    agent.add_argument(
        "--tool-choice-sticky",
        action="store_true",
        default=None,
        help="keep a forced --tool-choice for the whole run (default: after the model's "
        "first tool call it becomes auto, so the run can end)",
    )


def builtin_names(value: str) -> list[str]:
    """`read_file,run_command` -> the names; `none` -> []."""
    if value.strip().lower() == "none":
        return []
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give tool names separated by commas, or none")
    return names


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse `argv`, with the prompt allowed anywhere among the flags.

    `--headless PROMPT` and a positional PROMPT are the same thing; giving both is a
    mistake, and so is `--jsonl` without `--headless`.
    """
    args = parser.parse_intermixed_args(argv)
    if args.prompt is not None and args.headless:
        parser.error("two prompts given (after --headless and on its own): give one")
    if args.headless is not None and args.prompt is not None:
        args.headless = args.prompt
    if args.jsonl and args.headless is None:
        parser.error("--jsonl prints a headless run: add --headless")
    return args


def add_rule_flags(group: Any, rules_default: str) -> None:
    """--rules, --allow, --ask, --deny and --approve: how calls are allowed (the main
    command's and `workbench proxy`'s)."""
    group.add_argument(
        "--rules", type=Path, metavar="FILE", help=f"rules file (default: {rules_default})"
    )
    for flag, what in (("--allow", "allow"), ("--ask", "ask before"), ("--deny", "deny")):
        group.add_argument(
            flag,
            action="append",
            default=[],
            metavar="RULE",
            help=f"{what} calls matching RULE (repeatable)",
        )
    group.add_argument(
        "--approve",
        choices=["ask", "all", "none", "rules"],
        default=None,
        help='how "ask" is answered: ask a person (the app\'s default), all (allow), none '
        "(deny), or rules (only allow rules allow: the headless default)",
    )


def add_step_flags(parser: argparse.ArgumentParser, step_help: str, break_help: str) -> None:
    """--step and --break, in a "stepping" group."""
    step = parser.add_argument_group("stepping")
    step.add_argument("--step", action="store_true", help=step_help)
    step.add_argument(
        "--break", dest="breakpoints", action="append", default=[], metavar="BP", help=break_help
    )


def add_provider_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the OpenAI-compatible provider's flags (all default to None: "not given")."""
    group = parser.add_argument_group(
        "model endpoint",
        "Talk to an OpenAI-compatible server instead of the scripted demo model. "
        "Also read: OPENAI_BASE_URL, OPENAI_API_KEY, and profiles from the config file.",
    )
    group.add_argument("--base-url", metavar="URL", help="API root, e.g. http://localhost:11434/v1")
    group.add_argument("--model", metavar="ID", help="model id, e.g. gpt-4.1-mini or qwen3:8b")
    group.add_argument(
        "--api-key",
        metavar="KEY",
        help="API key (prefer OPENAI_API_KEY or a profile's api_key_env: flags show in `ps`)",
    )
    group.add_argument(
        "--profile", metavar="NAME", help="a [profiles.NAME] table of the config file"
    )
    group.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="config file: profiles, [prices], MCP servers "
        "(default: $WORKBENCH_CONFIG or ~/.config/agent-workbench/config.toml)",
    )
    group.add_argument(
        "--tool-choice", metavar="auto|required|none|TOOL", help="what the model may call"
    )
    group.add_argument("--temperature", type=float, metavar="T", help="sampling temperature")
    group.add_argument("--max-tokens", type=int, metavar="N", help="output token limit")


def approve_of(parser: argparse.ArgumentParser, args: argparse.Namespace, headless: bool) -> str:
    """`--approve`, or its default: a person in the app, the rules alone headless, where
    no one can answer (so "ask" is refused there)."""
    approve: str = args.approve or ("rules" if headless else "ask")
    if headless and approve == "ask":
        parser.error("--approve ask needs the app; headless runs take all, none or rules")
    return approve


def oversight_of(args: argparse.Namespace, approve: str) -> dict[str, Any]:
    """The fields of `workbench.oversight.Oversight` (the gate's rules and policy, the
    stepper's start) from the flags the app, headless runs and the proxy share."""
    return {
        "approve": approve,
        "rules_file": args.rules,
        "allow": args.allow,
        "ask": args.ask,
        "deny": args.deny,
        "step": args.step,
        "breakpoints": args.breakpoints,
    }
