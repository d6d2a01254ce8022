"""`workbench init` and `workbench run FILE:AGENT`: the project commands."""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.cli.args import Parser, approve_of


def init_main(argv: list[str]) -> int:
    from workbench.project.config import FILE_NAME, write_starter

    parser = Parser(
        prog="workbench init",
        description=f"Write a commented starter {FILE_NAME} in the current directory "
        "(never over an existing one).",
    )
    parser.parse_args(argv)
    try:
        path = write_starter(Path.cwd())
    except FileExistsError:
        print(
            f"workbench init: {FILE_NAME} already exists here; not overwriting it",
            file=sys.stderr,
        )
        return 2
    print(f"wrote {path}: edit it, then run `workbench` here")
    return 0


def run_main(argv: list[str]) -> int:
    parser = Parser(
        prog="workbench run",
        description="Open the app (or run headless) on an Agent you built in Python: "
        "FILE.py:NAME is an Agent, or a function with no arguments that returns one. "
        "Its model, tools, messages and hooks stay yours; the permission gate and the "
        "stepper chain onto your hooks.",
    )
    parser.add_argument("target", metavar="FILE.py:NAME", help="e.g. my_agent.py:agent")
    parser.add_argument("--headless", metavar="PROMPT", help="run PROMPT once without the app")
    parser.add_argument(
        "--approve",
        choices=["ask", "all", "none", "rules"],
        default=None,
        help='how "ask" is answered (app default: ask; headless default: rules)',
    )
    parser.add_argument(
        "--workspace", type=Path, metavar="DIR", help="where the rules apply (default: .)"
    )
    parser.add_argument("--rules", type=Path, metavar="FILE", help="rules file")
    parser.add_argument("--step", action="store_true", help="start in step mode")
    parser.add_argument("--session", type=Path, metavar="FILE", help="record the session to FILE")
    args = parser.parse_args(argv)
    from workbench import embed

    try:
        agent = embed.load_agent(args.target, Path.cwd())
    except ValueError as exc:
        print(f"workbench run: {exc}", file=sys.stderr)
        return 2
    workspace = args.workspace or Path.cwd()
    headless = args.headless is not None
    approve = approve_of(parser, args, headless)
    options = {
        "workspace": workspace,
        "rules": args.rules,
        "step": args.step,
        "session": args.session,
        "approve": approve,
    }
    from workbench.cli.headless import recording_exit_code, say_recording_problem

    with embed.attach(agent, **options) as runtime:
        if headless:
            import anyio

            from workbench.cli.headless import run_headless

            code = anyio.run(run_headless, runtime, args.headless)
        else:
            from workbench.widgets.app import make_app

            code = recording_exit_code(runtime, make_app(runtime).run() or 0)
            for problem in runtime.recorder.problems if runtime.recorder else ():
                say_recording_problem(problem)  # (headless says each as it happens)
        path = runtime.session_path
    if path is not None and path.exists():
        print(f"workbench: session recorded to {path}", file=sys.stderr)
    return code


def project_main(command: str, argv: list[str]) -> int:
    if command == "init":
        return init_main(argv)
    return run_main(argv)
