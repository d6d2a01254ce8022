"""The `workbench` command's flags."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from workbench import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description=(
            "Agent Workbench: watch, step through and steer an LLM agent's tool calls. "
            "With no arguments it opens the app on the built-in demo scenario, in a "
            "fresh scratch workspace, with the scripted model (no key needed)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    parser.add_argument(
        "--headless",
        nargs="?",
        const="",
        metavar="PROMPT",
        help="run once without the app and print the event stream; PROMPT defaults to the "
        "scenario's own. Exit code: 0 finished, 1 error, 130 aborted",
    )
    run = parser.add_argument_group("run")
    run.add_argument(
        "--scenario",
        default="demo",
        metavar="FILE",
        help="scripted scenario: a JSON file or a built-in name (default: demo)",
    )
    run.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="directory the tools work in (default: a fresh scratch copy of the scenario's files)",
    )
    run.add_argument(
        "--pace",
        type=float,
        default=None,
        metavar="CPS",
        help="scripted streaming speed in characters per second, 0 for instant "
        "(default: 400 in the app, instant headless)",
    )
    return parser


def pace_of(value: float | None, headless: bool) -> float:
    if value is None:
        return math.inf if headless else 400.0
    return math.inf if value <= 0 else value
