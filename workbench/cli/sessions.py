"""`workbench sessions --list | --search TEXT [filters] [--json]`: the session library for
scripts and people at a shell (`sessions prune` is in `workbench.cli.prune`).

Every run refreshes the index first (`Library.refresh`), so what is listed is what the
files hold now. Every text that came from a session file is printed literally
(`workbench.sanitize`); `--json` prints one JSON array.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workbench.cli.args import Parser
from workbench.cli.commands import EXIT_USAGE
from workbench.sanitize import literal, one_line
from workbench.sessions.dates import since, when
from workbench.sessions.library import Entry, Filters, Library


def sessions_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench sessions",
        description="List and search the recorded sessions, through an index kept beside "
        "them (refreshed from the files each time). With neither --list nor --search, at "
        "a terminal: a screen with a search box, the filters and a table (Enter opens "
        "replay). `workbench sessions prune --help` deletes old ones.",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the sessions, newest first")
    what.add_argument(
        "--search",
        metavar="TEXT",
        help="the sessions whose prompts, tool "
        "names, arguments, results or replies hold every word of TEXT "
        "(a word ending in * is a prefix)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array")
    add_filter_arguments(parser)
    parser.add_argument(
        "--dir",
        type=Path,
        metavar="DIR",
        help="the sessions directory (default: where runs are recorded)",
    )
    return parser


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("filters", "Every filter given must hold.")
    group.add_argument("--model", metavar="TEXT", help="model id or provider contains TEXT")
    group.add_argument("--tool", metavar="NAME", help="called the tool NAME")
    group.add_argument(
        "--errors",
        action="store_true",
        help="a call failed or the run ended in an error (with --tool: a call of that tool failed)",
    )
    group.add_argument(
        "--outcome",
        choices=["finished", "error", "aborted", "incomplete", "unreadable", "empty"],
        help="how the session ended",
    )
    group.add_argument("--denied", action="store_true", help="a call was denied")
    group.add_argument(
        "--since",
        type=since,
        metavar="DATE",
        help="recorded at or after DATE (2026-11-30, 2026-11-30T14:00, or 7d, 12h)",
    )
    group.add_argument("--limit", type=int, metavar="N", help="at most N sessions")


def filters_of(args: argparse.Namespace) -> Filters:
    return Filters(
        model=args.model,
        tool=args.tool,
        errors=args.errors,
        denied=args.denied,
        outcome=args.outcome,
        since=args.since,
        limit=args.limit,
    )


def sessions_main(argv: list[str]) -> int:
    if argv and argv[0] == "prune":
        from workbench.cli.prune import prune_main

        return prune_main(argv[1:])
    args = sessions_parser().parse_args(argv)
    if not (args.list or args.search is not None or args.json) and _interactive():
        from workbench.widgets.sessions_app import Query

        query = Query(filters=filters_of(args), since_text=_given(argv, "--since"))
        return sessions_screen(args.dir, query)
    try:
        with Library(args.dir) as library:
            report = library.refresh()
            if report.rebuilt:
                print(
                    "workbench sessions: the index was rebuilt from the session files",
                    file=sys.stderr,
                )
            entries = library.entries(filters_of(args), args.search)
    except ValueError as exc:
        print(f"workbench sessions: --search: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"workbench sessions: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps([entry.as_json() for entry in entries], ensure_ascii=True, indent=1))
        return 0
    for line in table(entries):
        print(line)
    return 0


def _given(argv: list[str], flag: str) -> str:
    """The text given to `flag` (the screen shows it as typed)."""
    for index, word in enumerate(argv):
        if word == flag and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith(flag + "="):
            return word[len(flag) + 1 :]
    return ""


def _interactive() -> bool:
    """A person at a terminal (else `workbench sessions` lists, for a pipe or a script)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def table(entries: list[Entry]) -> list[str]:
    """One line per session (and its search snippet under it), all text literal."""
    if not entries:
        return ["no sessions"]
    lines = [
        f"{'recorded':<16}  {'outcome':<10} {'model':<20} {'turns':>5} {'calls':>5} "
        f"{'errors':>6} {'denied':>6}  file / first prompt"
    ]
    for entry in entries:
        data: dict[str, Any] = entry.data
        lines.append(
            f"{when(data['created']):<16}  {data['outcome']:<10} "
            f"{one_line(data['model'], 20):<20} {data['turns']:>5} {data['calls']:>5} "
            f"{data['errors']:>6} {data['denials']:>6}  {literal(entry.path.name)}"
        )
        detail = entry.snippet or data["prompt"] or data["problem"]
        if detail:
            lines.append(f"{'':<18}{one_line(' '.join(detail.split()), 100)}")
    lines.append(f"{len(entries)} session{'s' if len(entries) != 1 else ''}")
    return lines


def sessions_screen(directory: Path | None, query: Any) -> int:
    """The library's screen; Enter opens replay, and quitting replay comes back to it."""
    from workbench.cli.replay import replay_main
    from workbench.widgets.sessions_app import SessionsApp

    while True:
        app = SessionsApp(directory, query)
        path = app.run()
        if path is None:
            return 0
        query = app.query_state
        replay_main([str(path)])
