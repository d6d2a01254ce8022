"""`workbench replay FILE`: step through a session on the app's screen
(`workbench.widgets.replay_app`, loaded only here), and run a fork (key f) built by
`workbench.session_runs.fork_options` in the live app."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.args import Parser, add_provider_arguments
from workbench.cli.commands import EXIT_USAGE, ask_for_cwd
from workbench.providers.settings import settings_from_args
from workbench.sanitize import literal
from workbench.sessions.reader import Session, read_session
from workbench.sessions.scrub import ScrubFold

if TYPE_CHECKING:  # a fork's runtime is loaded when the user forks, not before the screen
    from workbench.session_runs import ForkChoice


def replay_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench replay",
        description="Step through a recorded session event by event, in the same screen as a "
        "live run. Keys: left/right one event, [ ] turns, , . tool calls, d/D decisions, "
        "e/E errors, home/end, f fork (continue live from this turn), q quit.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a session file (.jsonl)")
    parser.add_argument("--at", type=int, metavar="N", help="open at event N (default: the last)")
    fork = parser.add_argument_group(
        "fork",
        "What a fork (key f) runs on: the recorded scenario or endpoint, unless a model "
        "endpoint is given below; recorded into a new session that names its parent.",
    )
    fork.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="where the fork's tools run: the files as they were at the fork point are "
        "restored into it if it is new or empty; one with files is used as it is (default: "
        "a scratch directory with those files; for a session recorded before checkpoints, a "
        "fresh copy of the recorded scenario's files, or the current directory if you "
        "agree; the path stored in the session is never used)",
    )
    fork.add_argument(
        "--in-place",
        action="store_true",
        help="run the fork in --workspace DIR (or the current directory, if you agree) as "
        "it is, without restoring the files",
    )
    fork.add_argument("--session", type=Path, metavar="FILE", help="the fork's session file")
    fork.add_argument(
        "--pace",
        type=float,
        default=None,
        metavar="CPS",
        help="scripted streaming speed of the fork (0: instant; default 400)",
    )
    add_provider_arguments(parser)
    return parser


def session_reader(
    path: Path, scrub: ScrubFold, choices: Callable[[Session], list[ForkChoice]]
) -> Callable[[Callable[[int], None]], tuple[Session, Callable[[], list[ForkChoice]]]]:
    """How replay reads `path` (`ReplayApp(read=...)`): in one pass that folds it into
    `scrub`, saying how many events so far; with how to list the models a fork can use
    (asked when the user forks)."""

    def read(
        progress: Callable[[int], None],
    ) -> tuple[Session, Callable[[], list[ForkChoice]]]:
        read_so_far = 0

        def feed(batch: list[Any]) -> None:
            nonlocal read_so_far
            scrub.feed(batch)
            read_so_far += len(batch)
            progress(read_so_far)

        session = read_session(path, feed)
        return session, partial(choices, session)

    return read


def replay_main(argv: list[str]) -> int:
    """`workbench replay FILE [--at N] [fork options]`."""
    from workbench.widgets.replay_app import (  # the screens: Textual, loaded here
        ForkedApp,
        ReplayApp,
    )

    args = replay_parser().parse_args(argv)
    try:
        flag_settings = settings_from_args(args)
    except ValueError as exc:
        print(f"workbench replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
    scrub = ScrubFold()
    read = session_reader(args.file, scrub, partial(_fork_choices, flag_settings=flag_settings))
    app = ReplayApp(read=read, at=args.at, scrub=scrub)
    request = app.run()
    if app.start_error is not None:
        print(f"workbench replay: {literal(app.start_error)}", file=sys.stderr)
        return EXIT_USAGE
    session = app.session
    if session is None:  # quit while it was being read
        return 0
    for warning in session.warnings:
        print(f"workbench replay: warning: {literal(warning)}", file=sys.stderr)
    from workbench.cli.headless import recording_exit_code, say_recording_problem
    from workbench.config_file import config_caps
    from workbench.runtime import build_runtime
    from workbench.session_runs import ForkRequest, fork_options, scenario_of
    from workbench.sessions.checkpoints import has_checkpoints
    from workbench.sessions.history import first_prompt

    if not isinstance(request, ForkRequest):
        return 0
    restores = has_checkpoints(session) and not args.in_place
    if args.workspace is None and not restores and (args.in_place or scenario_of(session) is None):
        args.workspace = ask_for_cwd(session, "replay", "fork")
        if args.workspace is None:
            return EXIT_USAGE
    try:
        options = fork_options(
            session,
            request,
            workspace=args.workspace,
            in_place=True if args.in_place else None,
            pace=args.pace,
            session_path=args.session,
        )
        options.caps = config_caps(getattr(args, "config", None))
        runtime = build_runtime(options)
    except (OSError, ValueError) as exc:
        print(f"workbench replay: cannot fork: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    fork = options.fork
    assert fork is not None
    prefill = "" if fork.events else first_prompt(session.events)
    code = ForkedApp(runtime, fork, prefill=prefill).run() or 0
    recorder = runtime.recorder
    for problem in recorder.problems if recorder else ():
        say_recording_problem(problem)
    print(f"workbench: the fork's {literal(fork.notes[0])}", file=sys.stderr)
    if recorder is not None and recorder.error is None and recorder.path.exists():
        print(f"workbench: forked session recorded to {recorder.path}", file=sys.stderr)
    return recording_exit_code(runtime, code)


def _fork_choices(session: Session, flag_settings: Any) -> list[ForkChoice]:
    from workbench.session_runs import fork_choices

    return fork_choices(session, flag_settings)
