"""`workbench diff A B`: compare two recorded sessions (see `workbench.sessions.diff`).

Exit code: 0 the same, 1 they differ, 2 bad input (as `rerun`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.args import Parser
from workbench.cli.commands import EXIT_DIFFERS, EXIT_SAME, EXIT_USAGE, load, project_ignores
from workbench.sanitize import literal
from workbench.sessions.diff import compare, report_lines, turns_of
from workbench.sessions.masks import Masks


def diff_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench diff",
        description="Compare two recorded sessions turn by turn and call by call: prompts, "
        "model text, tool calls (name, raw and validated arguments), decisions, results "
        "and errors. Shows the first divergence and every later difference. Exit code: "
        "0 the same, 1 they differ, 2 bad input.",
    )
    parser.add_argument("a", type=Path, metavar="A", help="a session file (.jsonl)")
    parser.add_argument("b", type=Path, metavar="B", help="another session file")
    parser.add_argument(
        "--timing-tolerance",
        type=float,
        metavar="FRACTION",
        help="also count a turn or call whose duration differs by more than "
        "this fraction (0.5: by half); default: timings never count",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="REGEX",
        help="mask text matching REGEX in results and errors before comparing (volatile "
        "output; repeatable; added to `ignore` under [rerun] in workbench.toml)",
    )
    parser.add_argument("--no-timings", action="store_true", help="leave the timings out")
    parser.add_argument(
        "--screen",
        action="store_true",
        help="show them side by side in a full-screen view instead (n / p: next / previous "
        "difference; the exit code is the same)",
    )
    return parser


def diff_main(argv: list[str]) -> int:
    args = diff_parser().parse_args(argv)
    sessions = [load(path, "diff") for path in (args.a, args.b)]
    if sessions[0] is None or sessions[1] is None:
        return EXIT_USAGE
    try:
        masks = Masks(project_ignores(Path.cwd()) + args.ignore)
    except ValueError as exc:
        print(f"workbench diff: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    a, b = turns_of(sessions[0]), turns_of(sessions[1])
    diffs = compare(a, b, args.timing_tolerance, masks)
    if args.screen:
        from workbench.widgets.diff_screen import DiffApp

        DiffApp(args.a, args.b, (a, b)).run()
        return EXIT_DIFFERS if diffs else EXIT_SAME
    for line in report_lines(args.a, args.b, a, b, diffs, timings=not args.no_timings):
        print(line)
    return EXIT_DIFFERS if diffs else EXIT_SAME
