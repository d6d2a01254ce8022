"""Fork: continue a recorded session live from one of its turns.

The fork point is the end of a turn (`history.fork_cut`), so the transcript handed
to the agent is complete: every tool call has its result. The new session file
names its parent in the header and starts with a copy of the parent's events up to
the cut, so it replays whole even if the parent is deleted, and its replay shows
exactly what the forked app showed (the app starts from the fold of those events).

This module only cuts; running the fork is `workbench.session_runs.fork_options`.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    records: list[tuple[int, Any]] = field(default_factory=list)
    """The parent's workspace records up to the cut (copied too, so the new file can
    restore every turn it holds; see `sessions.checkpoints`)."""
    always: list[str] = field(default_factory=list)
    """The "always allow" rules people chose in the parent's dialogs up to the cut,
    kept by the fork's gate (only for a session your own workbench recorded)."""
    breakpoints: list[str] = field(default_factory=list)
    """The breakpoints set when the cut was made."""
    approved: dict[str, list[Any]] = field(default_factory=dict)
    """The parent's calls after the cut that a person allowed as sent, by call id
    (`sessions.decisions.RecordedCall`): the same call in the fork (the recorded
    scenario plays it again) is not asked again. Only for a session your own
    workbench recorded."""
    notes: list[str] = field(default_factory=list)
    """What the fork keeps and what it does not, one sentence each, for the screen."""


def fork_point(session: Session, turn: int) -> ForkPoint:
    """Cut `session` after `turn` (or the last turn before it that ended)."""
    from workbench.sessions.checkpoints import read_records

    cut, kept = fork_cut(session.events, turn)
    events = session.events[:cut]
    point = ForkPoint(
        parent=ParentInfo(path=str(session.path.resolve()), turn=kept, events=cut),
        events=list(events),
        stamps=list(session.stamps[:cut]),
        messages=messages_of(events),
        system_prompt=session.header.system_prompt,
        records=[(at, r) for at, r in read_records(session) if at <= cut],
    )
    carry_answers(point, session, events)
    carry_approvals(point, session, cut)
    return point


def carry_approvals(point: ForkPoint, session: Session, cut: int) -> None:
    """Keep the approvals a person gave after the cut (see `ForkPoint.approved`)."""
    from workbench.sessions.decisions import DECISION_KINDS, approvals_by_a_person
    from workbench.sessions.log import of_kinds
    from workbench.sessions.trust import trusted

    approved = approvals_by_a_person(of_kinds(session.events[cut:], DECISION_KINDS))
    if not approved:
        return
    if trusted(session.header.setup):
        point.approved = approved
        point.notes.append(
            f"kept the parent's approvals of {len(approved)} later call(s): the same call "
            "with the same arguments is not asked again"
        )
    else:
        point.notes.append(
            "not kept: the parent's approvals of later calls: the session was not recorded "
            "by your workbench"
        )


def carry_answers(point: ForkPoint, session: Session, events: Sequence[Any]) -> None:
    """Keep the parent's "always" answers and breakpoints (up to the cut) in `point`.

    An "always" answer becomes an allow rule of the fork's gate, so it is kept only
    when the session carries this user's signature: a session file someone else
    wrote could otherwise hand the fork any rule it likes."""
    from workbench.sessions.trust import trusted

    always: list[str] = []
    for event in events:
        if event.type == "step_mode":
            point.breakpoints = list(event.breakpoints)
        elif (
            event.type == "permission_decision"
            and event.decision == "allow"
            and event.decided_by == "user"
            and event.scope != "once"
            and event.rule
            and event.rule not in always
        ):
            always.append(event.rule)
    if always and trusted(session.header.setup):
        point.always = always
        point.notes.append(f'kept the parent\'s "always" answers: {", ".join(always)}')
    elif always:
        point.notes.append(
            f'not kept: the parent\'s "always" answers ({", ".join(always)}): the session '
            "was not recorded by your workbench"
        )
    if point.breakpoints:
        point.notes.append(f"kept the parent's breakpoints: {', '.join(point.breakpoints)}")
