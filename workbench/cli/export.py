"""`workbench export FILE --format md|json|html`: a session as a Markdown transcript, its
normalized messages, or one self-contained HTML page to share (written by
`workbench.sessions.export`, piece by piece)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.args import Parser
from workbench.cli.commands import EXIT_USAGE, load
from workbench.config_file import default_config_path
from workbench.pricing import load_prices
from workbench.sessions.export import iter_export


def export_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="workbench export",
        description="Write a recorded session as a readable Markdown transcript (each call's "
        "arguments and result), as its normalized messages in JSON, or as one self-contained "
        "HTML page to share (timeline, each call's stages, decisions, results, times, cost and "
        "the model requests; it loads nothing from anywhere).",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a session file (.jsonl)")
    parser.add_argument(
        "--format", choices=["md", "json", "html"], required=True, help="md, json or html"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="OUT", help="write here (default: stdout)"
    )
    return parser


def export_main(argv: list[str]) -> int:
    args = export_parser().parse_args(argv)
    session = load(args.file, "export")
    if session is None:
        return EXIT_USAGE
    try:
        prices = load_prices(default_config_path())
    except ValueError as exc:
        print(f"workbench export: {exc}", file=sys.stderr)
        return EXIT_USAGE
    pieces = iter_export(session, args.format, prices)
    if args.output is None:
        for piece in pieces:
            sys.stdout.write(piece)
        return 0
    try:
        with args.output.open("w", encoding="utf-8") as out:
            for piece in pieces:  # written as made: the whole text is never held
                out.write(piece)
            written = out.tell()
    except OSError as exc:
        print(
            f"workbench export: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr
        )
        return EXIT_USAGE
    print(f"wrote {args.output} ({written} bytes)", file=sys.stderr)
    return 0
