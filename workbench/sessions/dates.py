"""Dates as the session library's filters write them: an age (7d, 12h) or an ISO date."""

from __future__ import annotations

import argparse
import time
from datetime import datetime

from workbench.sessions.prune import age


def since(text: str) -> float:
    """DATE as epoch ms: an ISO date or time (local time unless it says), or an age."""
    try:
        return (time.time() - age(text)) * 1000.0
    except argparse.ArgumentTypeError:
        pass
    try:
        return datetime.fromisoformat(text.strip()).timestamp() * 1000.0
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (2026-11-30, 2026-11-30T14:00) or an age (7d, 12h)"
        ) from None


def when(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000.0).strftime("%Y-%m-%d %H:%M") if ms else "?"
