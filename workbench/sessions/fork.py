"""Fork: continue a recorded session live from one of its turns.

The fork point is the end of a turn (`history.fork_cut`), so the transcript handed
to the agent is complete: every tool call has its result. The new session file
names its parent in the header and starts with a copy of the parent's events up to
the cut, so it replays whole even if the parent is deleted, and its replay shows
exactly what the forked app showed (the app starts from the fold of those events).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
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
    return point


def carry_answers(point: ForkPoint, session: Session, events: list[Any]) -> None:
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
        point.notes.append(f"kept the parent's \"always\" answers: {', '.join(always)}")
    elif always:
        point.notes.append(
            f"not kept: the parent's \"always\" answers ({', '.join(always)}): the session "
            "was not recorded by your workbench"
        )
    if point.breakpoints:
        point.notes.append(f"kept the parent's breakpoints: {', '.join(point.breakpoints)}")


def scenario_of(session: Session) -> Any:
    """The scripted scenario the session ran (None for a live model)."""
    from workbench.providers.scripted import Scenario

    data = session.header.scenario_data
    return Scenario.model_validate(data) if data is not None else None


@dataclass(frozen=True)
class ForkChoice:
    """A model a fork can continue with."""

    label: str
    settings: Any = None
    """OpenAI-compatible settings; None runs the recorded scripted scenario."""


@dataclass(frozen=True)
class ForkRequest:
    """What the replay app returns when the user forks."""

    turn: int
    choice: ForkChoice


def fork_choices(session: Session, flag_settings: Any) -> list[ForkChoice]:
    """The models a fork of `session` can use: flags first, then what was recorded.

    A recorded OpenAI-compatible endpoint is offered with the key from
    `$OPENAI_API_KEY` (the session never holds one).
    """
    from pydantic import SecretStr

    from workbench.providers.settings import OpenAISettings

    choices: list[ForkChoice] = []
    if flag_settings is not None:
        choices.append(
            ForkChoice(
                f"{flag_settings.model} at {flag_settings.base_url} (from the command line)",
                flag_settings,
            )
        )
    header = session.header
    if header.scenario_data is not None:
        choices.append(ForkChoice(f"the recorded scenario: {header.scenario} (scripted, offline)"))
    elif header.model.base_url and header.model.provider == "openai":
        key = os.environ.get("OPENAI_API_KEY")
        settings = OpenAISettings(
            model=header.model.id,
            base_url=header.model.base_url,
            api_key=SecretStr(key) if key else None,
        )
        choices.append(
            ForkChoice(
                f"the recorded model: {header.model.id} at {header.model.base_url}"
                f" (key: {'$OPENAI_API_KEY' if key else 'none'})",
                settings,
            )
        )
    return choices


def fork_options(
    session: Session,
    request: ForkRequest,
    *,
    workspace: Path | None = None,
    pace: float | None = None,
    session_path: Path | None = None,
) -> Any:
    """The `RunOptions` of a fork: its model, workspace, history and new session file.

    Args:
        workspace: where the fork's tools run. Default: the recorded workspace if it
            still exists (as it is now: files are not rolled back to the fork point),
            else a fresh copy of the scenario's files.
        pace: scripted streaming speed (None: the app's default).
        session_path: the new session file (None: a new one in the default directory).
    """
    # Imported here: the runtime imports this package to record.
    from workbench.cli.args import pace_of
    from workbench.runtime import RunOptions

    scenario = scenario_of(session)
    recorded = Path(session.header.workspace) if session.header.workspace else None
    if workspace is None and recorded is not None and recorded.is_dir():
        workspace = recorded
    setup = session.header.setup
    rebuild: dict[str, Any] = {}
    if setup is not None:
        from workbench.sessions.trust import needs_starting, trusted

        rebuild["builtin_tools"] = setup.builtin_tools
        if needs_starting(setup) and trusted(setup):  # never code a stranger recorded
            from workbench.mcp.config import McpServerConfig

            rebuild["tool_specs"] = list(setup.tool_specs)
            rebuild["project_dir"] = Path(setup.project_dir) if setup.project_dir else None
            rebuild["mcp_servers"] = [
                McpServerConfig(name=s.name, command=s.command, url=s.url, cwd=s.cwd,
                                source="session")
                for s in setup.mcp_servers
            ]
    return RunOptions(
        scenario=scenario if scenario is not None else "demo",
        workspace=workspace,
        pace=pace_of(pace, headless=False),
        provider_settings=request.choice.settings,
        session=session_path,
        fork=fork_point(session, request.turn),
        simulated_wire=True,
        **rebuild,
    )
