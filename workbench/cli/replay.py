"""`workbench replay FILE`'s flags; the command runs in `widgets.replay_app` (it needs
Textual), and a fork (key f) is built by `workbench.session_runs.fork_options`."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.args import Parser
from workbench.providers.settings import add_provider_arguments


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
        help="where the fork's tools run (default: a fresh copy of the recorded "
        "scenario's files; without a scenario you are asked whether to use the current "
        "directory; the path stored in the session is never used)",
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
