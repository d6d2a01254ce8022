"""`workbench`: the command the first word names, the app, or a headless run.

`workbench/__main__.py` hands argv here. The Textual app is imported inside `_run_app`
only, so the headless mode and the runtime never load Textual.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from typing import TYPE_CHECKING, Any

from workbench.cli.args import approve_of, build_parser, parse
from workbench.cli.commands import SUBCOMMANDS, subcommand_main
from workbench.cli.run_options import runtime_of, say

if TYPE_CHECKING:
    from workbench.runtime import Runtime

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
        say(unknown_command(argv[0]))
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
            say(
                "the app needs a terminal (stdin and stderr are not both one): "
                'run without it with --headless "PROMPT"'
            )
            return 2
        return _run_app(args, approve)
    try:
        runtime = runtime_of(args, headless, approve, say)
    except (OSError, ValueError) as exc:
        say(str(exc))
        return 2
    for line in runtime.not_offered:
        say(line)
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


def _run_app(args: argparse.Namespace, approve: Any) -> int:
    """The app, on its starting screen while the runtime is built (so the first frame
    does not wait for the runtime's imports); then what each run recorded."""
    from workbench.widgets.app import make_app

    said: list[str] = []  # said once the app has left the screen
    app = make_app(start=lambda: runtime_of(args, False, approve, said.append), prefill=args.prompt)
    code = app.run() or 0
    for note in said:
        say(note)
    if app.start_error is not None:
        say(app.start_error)
        return 2
    from workbench.cli.headless import recording_exit_code, say_recording_problem

    for each in app.runs:  # a new run (ctrl+n) records a session of its own
        for problem in each.recorder.problems if each.recorder else ():
            say_recording_problem(problem)
        _say_session(each)
        code = recording_exit_code(each, code)
    return code


def _say_session(runtime: Runtime, what: str = "session recorded to") -> None:
    path = runtime.session_path
    failed = runtime.recorder is not None and runtime.recorder.error is not None
    if path is not None and (what != "session recorded to" or (path.exists() and not failed)):
        print(f"workbench: {what} {path}", file=sys.stderr)


async def _run_headless(runtime: Any, prompt: str, jsonl: bool = False) -> int:
    """Start the MCP servers first (if any) and say how each went; the run goes on
    with whatever started."""
    from workbench.cli.headless import run_headless

    if runtime.mcp is None:
        return await run_headless(runtime, prompt, jsonl=jsonl)
    from workbench.mcp.headless import run_with_servers

    return await run_with_servers(runtime, lambda: run_headless(runtime, prompt, jsonl=jsonl))
