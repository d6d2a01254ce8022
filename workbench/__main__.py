"""`workbench`: the command-line entry point.

The Textual app is imported inside `main()` only when it is needed, so the
headless mode and the runtime never load Textual.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.args import approve_of, build_parser, oversight_of, parse
from workbench.cli.commands import SUBCOMMANDS, subcommand_main
from workbench.sanitize import literal

if TYPE_CHECKING:
    from workbench.runtime import RunOptions, Runtime

PROJECT_COMMANDS = ("init", "run")
COMMANDS = ("demo", *PROJECT_COMMANDS, "proxy", "acp", *SUBCOMMANDS)
"""What the first word on the line may name. Any other single word there is a mistake
(`workbench halp`), never a prompt: a prompt is a phrase (`workbench "list the files"`),
follows `--headless`, or follows `--` (`workbench -- hi`)."""


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the process is the workbench's: its secrets leave its environment
        from workbench.secret_env import hide_environment, hold_environment

        if sys.argv[1:2] == ["run"]:  # your own agent runs here: its environment stays
            hide_environment()
        else:
            hold_environment()
    code = _main(sys.argv[1:] if argv is None else argv)
    return code if argv is not None else leave(code)


def leave(code: int) -> int:
    """`code`, or exit now with it when a tool abandoned after an abort still holds a
    thread: Python would otherwise wait for that thread before the process can end.
    (Everything is written: the session file is written unbuffered, event by event.)"""
    from workbench.agent.detached import abandoned_calls

    main_thread = threading.main_thread()
    stuck = [
        t for t in threading.enumerate() if t is not main_thread and not t.daemon and t.is_alive()
    ]
    if abandoned_calls() and stuck:
        print(
            "workbench: exiting without waiting for a tool that ignored the abort "
            "(its thread is still running)",
            file=sys.stderr,
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _main(argv: list[str]) -> int:
    if argv and _looks_like_a_command(argv[0]) and argv[0] not in COMMANDS:
        _say(unknown_command(argv[0]))
        return 2
    if argv and argv[0] == "acp":
        from workbench.cli.acp import acp_main

        return acp_main(argv[1:])
    if argv and argv[0] == "proxy":
        from workbench.cli.proxy import proxy_main

        return proxy_main(argv[1:])
    if argv and argv[0] in SUBCOMMANDS:  # replay | rerun | export | sessions | diff
        return subcommand_main(argv[0], argv[1:])
    if argv and argv[0] in PROJECT_COMMANDS:  # init | run FILE:AGENT
        from workbench.cli.project import project_main

        return project_main(argv[0], argv[1:])
    demo = bool(argv) and argv[0] == "demo"
    parser = build_parser()
    args = parse(parser, argv[1:] if demo else argv)
    args.demo = demo
    headless = args.headless is not None
    approve = approve_of(parser, args, headless)
    if not headless:
        if not _at_a_terminal():
            _say(
                "the app needs a terminal (stdin and stderr are not both one): "
                'run without it with --headless "PROMPT"'
            )
            return 2
        return _run_app(args, approve)
    try:
        runtime = runtime_of(args, headless, approve, _say)
    except (OSError, ValueError) as exc:
        _say(str(exc))
        return 2
    for line in runtime.not_offered:
        _say(line)
    prompt = args.headless or runtime.prompt
    if not prompt:
        print(
            "workbench: --headless needs a PROMPT (the model has no scenario prompt)",
            file=sys.stderr,
        )
        return 2
    announced = runtime.session_path
    if announced is not None:
        print(f"workbench: recording the session to {announced}", file=sys.stderr)
    import anyio

    code = anyio.run(_run_headless, runtime, prompt, args.jsonl)
    if runtime.session_path != announced:  # another run took that name first
        _say_session(runtime, f"{announced} was taken by another run: session recorded to")
    return code


def _at_a_terminal() -> bool:
    """Whether the app can be seen and answered: Textual draws on stderr and reads stdin."""
    stderr = sys.__stderr__
    return sys.stdin.isatty() and stderr is not None and stderr.isatty()


def _looks_like_a_command(word: str) -> bool:
    return re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", word) is not None


def unknown_command(word: str) -> str:
    """What to say about a first word that names no command, with the nearest one."""
    import difflib

    near = difflib.get_close_matches(word, [*COMMANDS, "help"], n=1, cutoff=0.6)
    guess = ""
    if near:
        guess = " (did you mean --help?)" if near[0] == "help" else f" (did you mean {near[0]}?)"
    return (
        f"unknown command {word!r}{guess}; commands: {', '.join(COMMANDS)}. "
        f"A prompt of one word goes after --: workbench -- {word}"
    )


def runtime_of(
    args: argparse.Namespace, headless: bool, approve: Any, say: Callable[[str], None]
) -> Runtime:
    """The runtime the flags describe (`say` hears what was done on the way).

    Raises:
        OSError, ValueError: bad input (a flag, the project file, a file they name).
    """
    from workbench.runtime import build_runtime

    options = options_from_args(args, headless, approve, say)
    if options.workspace is not None and not options.workspace.is_dir():
        raise ValueError(f"--workspace {options.workspace} is not a directory")
    if options.mcp or options.mcp_servers:  # stdio servers boot while the runtime loads
        from workbench.mcp.early import start_early_for

        start_early_for(options)
    return build_runtime(options)


def _run_app(args: argparse.Namespace, approve: Any) -> int:
    """The app, on its starting screen while the runtime is built (so the first frame
    does not wait for the runtime's imports); then what each run recorded."""
    from widgets.app import make_app

    said: list[str] = []  # said once the app has left the screen
    app = make_app(start=lambda: runtime_of(args, False, approve, said.append), prefill=args.prompt)
    code = app.run() or 0
    for note in said:
        _say(note)
    if app.start_error is not None:
        _say(app.start_error)
        return 2
    from workbench.cli.headless import recording_exit_code, say_recording_problem

    for each in app.runs:  # a new run (ctrl+n) records a session of its own
        for problem in each.recorder.problems if each.recorder else ():
            say_recording_problem(problem)
        _say_session(each)
        code = recording_exit_code(each, code)
    return code


def _say(text: str) -> None:
    print(f"workbench: {literal(text)}", file=sys.stderr)


def options_from_args(
    args: argparse.Namespace,
    headless: bool,
    approve: Any,
    say: Callable[[str], None] = _say,
) -> RunOptions:
    """The run the flags (and the current directory's project file) describe; `say`
    hears what was done on the way (a project's prune policy).

    Raises:
        ValueError: a bad project file, prompt file or provider setting.
    """
    from workbench.config_file import config_caps
    from workbench.providers.settings import settings_from_args
    from workbench.runtime import RunOptions, pace_of

    if getattr(args, "demo", False):
        _no_project(args, Path.cwd())  # the built-in demo, whatever this directory holds
    else:
        apply_project(args, Path.cwd())
    provider_settings = settings_from_args(args)
    system_prompt = system_prompt_of(args)  # a missing prompt file is said first
    if provider_settings is None and args.scenario is None:
        _demo_or_refuse(args)
    if args.project_prune is not None and not args.no_record:
        from workbench.cli.prune import apply_policy

        said = apply_policy(args.project_prune)
        if said:
            say(said)
    return RunOptions(
        scenario=args.scenario or "demo",
        workspace=args.workspace,
        pace=pace_of(args.pace, headless),
        provider_settings=provider_settings,
        **oversight_of(args, approve),
        slow_after=args.slow_after,
        capture_chunks=args.capture_chunks,
        mcp_servers=[*args.project_mcp, *_mcp_servers(args)],
        mcp_log_level=args.mcp_log_level,
        pass_env=[*_config_pass_env(args), *args.pass_env],
        session=args.session,
        record=not args.no_record,
        tool_specs=args.tool_specs or [],
        tool_specs_from=getattr(args, "tool_specs_from", "--tools"),
        builtin_tools=args.builtin_tools,
        project_dir=args.project_dir,
        system_prompt=system_prompt,
        max_turns=args.max_turns,
        tool_choice_sticky=bool(args.tool_choice_sticky),
        prices=_config_prices(args),
        caps=config_caps(args.config),  # [limits]
        simulated_wire=True,
        checkpoints=getattr(args, "project_checkpoints", None),
    )


# What a project file may set, by flag (`dest`): (key in the file, is a path).
_PROJECT_FLAGS = {
    "tool_specs": ("tools", False),
    "builtin_tools": ("builtin_tools", False),
    "profile": ("profile", False),
    "model": ("model", False),
    "base_url": ("base_url", False),
    "tool_choice": ("tool_choice", False),
    "tool_choice_sticky": ("tool_choice_sticky", False),
    "scenario": ("scenario", True),
    "rules": ("rules", True),
    "workspace": ("workspace", True),
    "max_turns": ("max_turns", False),
}


def _no_project(args: argparse.Namespace, directory: Path) -> None:
    args.project_dir = directory
    args.project_mcp = []
    args.project_prune = None
    args.project_path = None


def _demo_or_refuse(args: argparse.Namespace) -> None:
    """No model and no scenario: the built-in demo, when that is what was asked for
    (`workbench demo`, or nothing of your own agent named); otherwise say so.

    Raises:
        ValueError: your tools or system prompt are named (in the project file or by
            flags) but no model is: the demo would play with them attached.
    """
    if getattr(args, "demo", False):
        return
    own = args.tool_specs or args.system_prompt is not None or args.system_prompt_file is not None
    if not own:
        return
    project: Path | None = getattr(args, "project_path", None)
    where = f"{project.name} ({project})" if project is not None else "the command line"
    raise ValueError(
        f"no model is configured in {where}: set `profile`, or `base_url` and `model` "
        "(or --profile, or --base-url and --model; a scripted `scenario` runs offline). "
        "`workbench demo` runs the built-in demo"
    )


def apply_project(args: argparse.Namespace, directory: Path) -> None:
    """Fill the flags not given from the project file of `directory` (if any).

    Sets `args.project_dir` (where tool specs are found) and `args.project_mcp` (its
    MCP servers). Raises ValueError for a bad project file.
    """
    from workbench.project.config import find_project

    _no_project(args, directory)
    project = find_project(directory)
    if project is None:
        return
    args.project_path = project.path
    args.project_prune = project.sessions.prune if project.sessions else None
    args.project_dir = project.directory
    for dest, (key, is_path) in _PROJECT_FLAGS.items():
        value = getattr(project, key)
        if value is None or (dest == "tool_specs" and not value):
            continue  # not in the file (`builtin_tools = []` is: it means none)
        if getattr(args, dest, None) is None:
            setattr(args, dest, project.resolve(value) if is_path else value)
            if dest == "tool_specs" and project.path is not None:
                args.tool_specs_from = f"{project.path.name} tools"
    prompt_given = args.system_prompt is not None or args.system_prompt_file is not None
    if not prompt_given:
        args.system_prompt = project.system_prompt
        args.system_prompt_file = project.resolve(project.system_prompt_file)
    args.project_mcp = project.mcp_servers()
    args.project_checkpoints = project.checkpoints


def system_prompt_of(args: argparse.Namespace) -> str | None:
    """`--system-prompt`, or the text of `--system-prompt-file` (None: neither)."""
    if args.system_prompt_file is None:
        return args.system_prompt
    path: Path = args.system_prompt_file
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ValueError(f"--system-prompt-file {path}: {why}") from None


def _say_session(runtime: Runtime, what: str = "session recorded to") -> None:
    path = runtime.session_path
    failed = runtime.recorder is not None and runtime.recorder.error is not None
    if path is not None and (what != "session recorded to" or (path.exists() and not failed)):
        print(f"workbench: {what} {path}", file=sys.stderr)


def _config_prices(args: Any) -> Any:
    """The price table: the config file's `[prices]` (--config, else the default), then
    the built-in prices."""
    from workbench.config_file import default_config_path
    from workbench.pricing import load_prices

    return load_prices(args.config or default_config_path(), required=args.config is not None)


def _mcp_servers(args: Any) -> list[Any]:
    """Every MCP server to start: the config file's `[mcp.servers.NAME]` tables (--config,
    else the default), then each --mcp-config file's, then the flags' in their order."""
    from workbench.config_file import default_config_path
    from workbench.mcp.config import load_mcp_json, load_mcp_servers, servers_from_flags

    servers = load_mcp_servers(
        args.config or default_config_path(), required=args.config is not None
    )
    for path in args.mcp_config:
        servers += load_mcp_json(Path(path))
    return servers + servers_from_flags(getattr(args, "mcp_specs", None) or [])


def _config_pass_env(args: Any) -> list[str]:
    """`[commands] pass_env` of the config file (--config, else the default)."""
    from tools.command_env import config_pass_env
    from workbench.config_file import default_config_path

    return config_pass_env(args.config or default_config_path())


async def _run_headless(runtime: Any, prompt: str, jsonl: bool = False) -> int:
    """Start the MCP servers first (if any) and say how each went; the run goes on
    with whatever started."""
    from workbench.cli.headless import run_headless

    if runtime.mcp is None:
        return await run_headless(runtime, prompt, jsonl=jsonl)
    from workbench.mcp.headless import run_with_servers

    return await run_with_servers(runtime, lambda: run_headless(runtime, prompt, jsonl=jsonl))


if __name__ == "__main__":
    sys.exit(main())
