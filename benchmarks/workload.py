"""The throughput workload's size, as command-line options (shared by `ui_throughput.py`
and `ui_instructions.py`; no heavy imports, so `ui_instructions.py` can read its
options before it slows the clock that Textual then binds)."""

from __future__ import annotations

import argparse


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20, help="tool calls per turn")
    parser.add_argument("--updates", type=int, default=10, help="on_update events per call")
    parser.add_argument(
        "--text", type=int, default=2000, help="characters of streamed text per turn"
    )


def workload_argv(args: argparse.Namespace) -> list[str]:
    """The options `add_workload_arguments` read, as a child process's arguments."""
    return [
        "--turns",
        str(args.turns),
        "--calls",
        str(args.calls),
        "--updates",
        str(args.updates),
        "--text",
        str(args.text),
    ]
