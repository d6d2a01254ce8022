"""The session subcommands: `workbench replay | rerun | export FILE`.

`workbench/__main__.py` hands argv here when its first word names a subcommand.
Parsing lives here for all three; `replay` runs in `widgets.replay_app` (it needs
Textual, which nothing in this package imports). Every failure a person can cause
(a missing file, a newer format, a bad flag) ends in one line on stderr and exit
code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from workbench.cli.args import Parser
from workbench.providers.settings import add_provider_arguments
from workbench.sanitize import literal, one_line
from workbench.sessions.reader import Session, SessionError, read_session
from workbench.sessions.rerun import RerunReport, rerun

SUBCOMMANDS = ("replay", "rerun", "export")
EXIT_SAME = 0
EXIT_DIFFERS = 1
EXIT_USAGE = 2


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
        help="where the fork's tools run (default: the recorded workspace if it "
        "still exists, else a fresh copy of the scenario's files)",
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


def rerun_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench rerun",
        description="Run a recorded session again: the recorded model replies, the real tools "
        "under the current permission rules. Reports every call whose result differs from the "
        "recording. Exit code: 0 all the same, 1 something differed, 2 bad input.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a session file (.jsonl)")
    parser.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="where the tools run (default: a fresh copy of the recorded "
        "scenario's files, else the recorded workspace)",
    )
    parser.add_argument(
        "--approve",
        choices=["all", "none", "rules"],
        default="rules",
        help='how "ask" rules are answered (default: rules, only allow rules allow)',
    )
    parser.add_argument("--rules", type=Path, metavar="FILE", help="rules file")
    for flag in ("allow", "ask", "deny"):
        parser.add_argument(
            f"--{flag}",
            action="append",
            default=[],
            metavar="RULE",
            help=f"{flag} calls matching RULE (repeatable)",
        )
    parser.add_argument("--session", type=Path, metavar="FILE", help="also record the re-run there")
    parser.add_argument("--quiet", action="store_true", help="print only calls that differ")
    return parser


def export_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench export",
        description="Write a recorded session as a readable Markdown transcript (each call's "
        "arguments and result) or as its normalized messages in JSON.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a session file (.jsonl)")
    parser.add_argument("--format", choices=["md", "json"], required=True, help="md or json")
    parser.add_argument(
        "-o", "--output", type=Path, metavar="OUT", help="write here (default: stdout)"
    )
    return parser


def load(path: Path, command: str) -> Session | None:
    """Read a session, printing its warnings; None (after one error line) if it cannot be read."""
    try:
        session = read_session(path)
    except SessionError as exc:
        print(f"workbench {command}: {exc}", file=sys.stderr)
        return None
    for warning in session.warnings:
        print(f"workbench {command}: warning: {warning}", file=sys.stderr)
    return session


def export_main(argv: list[str]) -> int:
    from workbench.pricing import load_prices
    from workbench.providers.settings import default_config_path
    from workbench.sessions.export import export

    args = export_parser().parse_args(argv)
    session = load(args.file, "export")
    if session is None:
        return EXIT_USAGE
    try:
        prices = load_prices(default_config_path())
    except ValueError as exc:
        print(f"workbench export: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = export(session, args.format, prices)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(
            f"workbench export: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr
        )
        return EXIT_USAGE
    print(f"wrote {args.output} ({len(text.encode())} bytes)", file=sys.stderr)
    return 0


def rerun_main(argv: list[str]) -> int:
    args = rerun_parser().parse_args(argv)
    if args.workspace is not None and not args.workspace.is_dir():
        print(f"workbench rerun: --workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    session = load(args.file, "rerun")
    if session is None:
        return EXIT_USAGE

    async def go() -> RerunReport:
        return await rerun(
            session,
            workspace=args.workspace,
            approve=args.approve,
            allow=args.allow,
            ask=args.ask,
            deny=args.deny,
            rules_file=args.rules,
            record_to=args.session,
        )

    try:
        report = anyio.run(go)
    except (OSError, ValueError) as exc:
        print(f"workbench rerun: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in report_lines(report, args.file, args.approve, quiet=args.quiet):
        print(line)
    return EXIT_DIFFERS if report.differs else EXIT_SAME


def report_lines(
    report: RerunReport, path: Path, approve: str, *, quiet: bool = False
) -> list[str]:
    """The re-run report as plain text lines (untrusted text made literal)."""
    marks = {"same": "✓", "differs": "✗", "missing": "✗", "extra": "✗", "skipped": "–"}
    lines = [
        f"rerun of {literal(str(path))} in {literal(str(report.workspace))} (approve: {approve})"
    ]
    lines += [f"  ! {literal(w)}" for w in report.warnings]
    for call in report.calls:
        if quiet and call.status in ("same", "skipped"):
            continue
        note = f" ({one_line(call.note, 80)})" if call.note else ""
        call_id, name = literal(call.tool_call_id), literal(call.tool_name)
        lines.append(f"  {marks[call.status]} {call_id:<14} {name:<16} {call.status}{note}")
        if call.status == "differs":
            lines += [f"      {literal(d)}" for d in call.diff()]
        elif call.status in ("missing", "extra"):
            message = call.recorded or call.now
            text = one_line(message.text, 100) if message else ""
            lines.append(f"      {'recorded' if call.recorded else 'now'}: {text}")
    counts = ", ".join(
        f"{report.count(s)} {s}"
        for s in ("same", "differs", "missing", "extra", "skipped")
        if report.count(s)
    )
    verdict = "something differed" if report.differs else "every result is the same"
    lines.append(f"{len(report.calls)} calls: {counts or 'none'}; {verdict}")
    return lines


def subcommand_main(command: str, argv: list[str]) -> int:
    """Run `workbench rerun ...` or `workbench export ...` (replay needs the app)."""
    if command == "rerun":
        return rerun_main(argv)
    if command == "export":
        return export_main(argv)
    raise ValueError(f"unknown subcommand {command!r}")
