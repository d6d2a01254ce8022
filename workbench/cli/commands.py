"""The subcommands that read a session file: `workbench replay | rerun | export | sessions
| diff`, and what they share (reading a file with one-line errors, exit codes, asking
before running tools in the current directory).

`workbench/cli/main.py` hands argv here when its first word names one of them (replay's
screens are `workbench.widgets.replay_app`, loaded only when it opens). Every failure a
person can cause (a missing file, a newer format, a bad flag) ends in one line on stderr
and exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.sanitize import literal
from workbench.sessions.trust import RunKind

if TYPE_CHECKING:
    from workbench.sessions.reader import Session

SUBCOMMANDS = ("replay", "rerun", "export", "sessions", "diff", "restore", "bundle")
EXIT_SAME = 0
EXIT_DIFFERS = 1
EXIT_USAGE = 2


def load(path: Path, command: str, on_batch: Any = None) -> Session | None:
    """Read a session, printing its warnings; None (after one error line) if it cannot be
    read. `on_batch`: see `read_session`."""
    from workbench.sessions.reader import SessionError, read_session

    try:
        session = read_session(path, on_batch)
    except SessionError as exc:
        print(f"workbench {command}: {literal(str(exc))}", file=sys.stderr)
        return None
    for warning in session.warnings:
        print(f"workbench {command}: warning: {literal(warning)}", file=sys.stderr)
    return session


_QUESTION = {"re-run": "Re-run its tools", "fork": "Run the fork's tools"}
_NOT_DONE = {"re-run": "not re-run", "fork": "not forked"}


def ask_for_cwd(session: Session, command: str, kind: RunKind = "re-run") -> Path | None:
    """The current directory, if a person at a terminal agrees to run the session's
    tools there (a session file's own workspace path is never trusted)."""
    recorded = repr(session.header.workspace or "(unknown)")
    if not sys.stdin.isatty():
        print(
            f"workbench {command}: the session ran in {recorded}; a {kind} does not trust a "
            "path from a session file: pass --workspace DIR",
            file=sys.stderr,
        )
        return None
    cwd = Path.cwd()
    question = (
        f"The session ran in {recorded} (not trusted: a session file can say anything).\n"
        f"{_QUESTION[kind]} in the current directory, {literal(str(cwd))}? [y/N] "
    )
    try:
        answer = input(question)
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        print(f"workbench {command}: {_NOT_DONE[kind]}; pass --workspace DIR", file=sys.stderr)
        return None
    return cwd


def project_ignores(base: Path) -> list[str]:
    """The `ignore` masks under `[rerun]` of the project file of `base`.

    Raises:
        ValueError: a project file that cannot be read.
    """
    from workbench.project.config import find_project

    project = find_project(base)
    return list(project.rerun.ignore) if project is not None and project.rerun else []


EXIT_PIPE_CLOSED = 141
"""What a shell reports for a writer whose reader went away (128 + SIGPIPE)."""


def subcommand_main(command: str, argv: list[str]) -> int:
    """Run `workbench replay | rerun | export | sessions | diff | restore ...`.

    Output piped to a reader that stops early (`| head`) ends the command quietly."""
    try:
        return _dispatch(command, argv)
    except BrokenPipeError:
        # Nothing more can be written; point stdout at /dev/null so the interpreter's
        # last flush does not fail again on the way out.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE_CLOSED


def _dispatch(command: str, argv: list[str]) -> int:
    if command == "replay":
        from workbench.cli.replay import replay_main

        return replay_main(argv)
    if command == "bundle":
        from workbench.cli.bundle import bundle_main

        return bundle_main(argv)
    if command == "rerun":
        from workbench.cli.rerun import rerun_main

        return rerun_main(argv)
    if command == "export":
        from workbench.cli.export import export_main

        return export_main(argv)
    if command == "sessions":
        from workbench.cli.sessions import sessions_main

        return sessions_main(argv)
    if command == "diff":
        from workbench.cli.diff import diff_main

        return diff_main(argv)
    if command == "restore":
        from workbench.cli.restore import restore_main

        return restore_main(argv)
    raise ValueError(f"unknown subcommand {command!r}")
