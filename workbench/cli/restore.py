"""`workbench restore FILE --turn N --to DIR`: the workspace as it was at a turn.

Exit codes: 0 restored whole; 1 restored, but files the recording left out (by a
size cap, or unreadable) are missing, or the restore failed part way; 2 bad input
(no such session, no checkpoints, no such turn, a directory that is not empty).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from workbench.cli.args import Parser
from workbench.sanitize import literal

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def turn_of(text: str) -> int | str:
    if text == "end":
        return "end"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a turn number or 'end'") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a turn is 0 or more")
    return value


def restore_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench restore",
        description="Write the workspace as it was at the start of a turn of a recorded "
        "session (its files are recorded as the run changes them). Exit code: 0 restored, "
        "1 files the recording left out are missing (listed), 2 bad input.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a session file (.jsonl)")
    parser.add_argument(
        "--turn",
        type=turn_of,
        required=True,
        metavar="N|end",
        help="the turn to restore the start of (0: before the first turn; end: after the last)",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--to", type=Path, metavar="DIR", help="write it here (new or empty)")
    where.add_argument(
        "--in-place",
        action="store_true",
        help="write it over the recorded workspace itself (asks first)",
    )
    parser.add_argument("--force", action="store_true", help="write into a DIR that is not empty")
    parser.add_argument("--yes", action="store_true", help="do not ask before --in-place")
    return parser


def restore_main(argv: list[str]) -> int:
    from workbench.cli.commands import load
    from workbench.sessions.checkpoints import CheckpointError, restore_workspace, turn_position

    args = restore_parser().parse_args(argv)
    session = load(args.file, "restore")
    if session is None:
        return EXIT_USAGE
    dest = args.to
    if args.in_place:
        dest = _in_place_target(session, args)
        if dest is None:
            return EXIT_USAGE
    try:
        turn_position(session, args.turn)  # a bad turn is bad input, before asking
        if args.in_place and not args.yes and not _confirm(dest, args.turn):
            print("workbench restore: nothing written", file=sys.stderr)
            return EXIT_USAGE
        done = restore_workspace(session, args.turn, dest, force=args.force, in_place=args.in_place)
    except CheckpointError as exc:
        print(f"workbench restore: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE if done_nothing(exc) else EXIT_ERROR
    at = "the end" if args.turn == "end" else f"the start of turn {args.turn}"
    print(
        f"restored {done.written} files ({done.bytes} bytes) as they were at {at} "
        f"into {literal(str(dest))}"
        + (f"; deleted {len(done.deleted)} that did not exist then" if done.deleted else "")
    )
    for path, why in sorted(done.refused.items()):
        print(f"  not written: {literal(path)} ({literal(why)})")
    for note in done.state.notes:
        print(f"  note: {literal(note)}")
    missing = done.state.incomplete
    for path, why in sorted(done.state.left_out.items()):
        mark = "missing" if path in missing else "not recorded"
        print(f"  {mark}: {literal(path)} ({literal(why)})")
    if missing or done.refused:
        print(
            f"workbench restore: {len(missing) + len(done.refused)} files of the workspace "
            "are not restored (listed above): raise the caps in [checkpoints] of "
            "workbench.toml to record them next time",
            file=sys.stderr,
        )
        return EXIT_ERROR
    return EXIT_OK


def done_nothing(exc: Exception) -> bool:
    """Whether a restore failed before writing (bad input) rather than part way."""
    return not str(exc).startswith("cannot write")


def _in_place_target(session: Any, args: argparse.Namespace) -> Path | None:
    """The recorded workspace, for a session this user's workbench recorded (a session
    file from anyone else could name any directory: ~/.ssh, say)."""
    from workbench.sessions.trust import trusted

    recorded = session.header.workspace
    if not trusted(session.header.setup):
        print(
            "workbench restore: this session was not recorded by your workbench, so the "
            f"workspace it names ({literal(repr(recorded))}) is not trusted; pass --to DIR "
            "(with --force to write into a directory that is not empty)",
            file=sys.stderr,
        )
        return None
    path = Path(recorded) if recorded else None
    if path is None or not path.is_dir():
        print(
            f"workbench restore: the recorded workspace {literal(repr(recorded))} is not a "
            "directory here; pass --to DIR",
            file=sys.stderr,
        )
        return None
    if path.resolve() in (Path("/"), Path.home().resolve()):
        print(
            "workbench restore: / and the home directory are never restored over", file=sys.stderr
        )
        return None
    return path


def _confirm(dest: Path, turn: int | str) -> bool:
    if not sys.stdin.isatty():
        print(
            "workbench restore: --in-place asks first; pass --yes to restore without asking",
            file=sys.stderr,
        )
        return False
    at = "the end" if turn == "end" else f"the start of turn {turn}"
    try:
        answer = input(
            f"Overwrite the files of {literal(str(dest))} with the workspace as it was at {at}? "
            "Files the session created later are deleted. [y/N] "
        )
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")
