"""Fork: continue a recorded session live from one of its turns.

The fork point is the end of a turn (`history.fork_cut`), so the transcript handed
to the agent is complete: every tool call has its result. The new session file
names its parent in the header and starts with a copy of the parent's events up to
the cut, so it replays whole even if the parent is deleted, and its replay shows
exactly what the forked app showed (the app starts from the fold of those events).

This module only cuts; running the fork is `workbench.session_runs.fork_options`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.sessions.header import ParentInfo
from workbench.sessions.history import fork_cut, messages_of
from workbench.sessions.reader import Session


@dataclass
class ForkPoint:
    """A recorded session cut after one of its turns, ready to be run on."""

    parent: ParentInfo
    events: list[Any] = field(default_factory=list)
    """The parent's events up to the cut (copied into the new file, folded by the app)."""
    stamps: list[float] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    """The transcript up to the cut: the forked agent's starting messages."""
    system_prompt: str = ""


def fork_point(session: Session, turn: int) -> ForkPoint:
    """Cut `session` after `turn` (or the last turn before it that ended)."""
    cut, kept = fork_cut(session.events, turn)
    events = session.events[:cut]
    return ForkPoint(
        parent=ParentInfo(path=str(session.path.resolve()), turn=kept, events=cut),
        events=list(events),
        stamps=list(session.stamps[:cut]),
        messages=messages_of(events),
        system_prompt=session.header.system_prompt,
    )
