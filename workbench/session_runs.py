"""Runs made from a recorded session: a fork continues it live, a re-run plays it back.

Both are built by `workbench.runtime.build_runtime`, like every other run: one
wiring of agent, gate, stepper, recorder and tools. What they take from the session
file is data (the transcript, the model's replies, the recorded setup); where their
tools run is never the path the file holds unless the user names it
(`workbench.sessions.trust.trusted_workspace`).

- `fork_options`: the `RunOptions` that continue a session from one of its turns;
- `rerun`: the recorded model's replies against the real tools, each result compared
  with the recorded one (see `workbench.sessions.rerun` for how).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.agent import (
    AgentTool,
    AssistantMessage,
    Model,
    ToolResultMessage,
)
from workbench.agent.content_caps import ContentCaps
from workbench.config_file import config_caps
from workbench.permissions import chain_before
from workbench.providers.recorded import RecordedModel
from workbench.providers.scripted import Scenario
from workbench.rerun_files import FileChecks
from workbench.rerun_hooks import RecordedEdits, ReplayedDecisions
from workbench.runtime import RunOptions, build_runtime, pace_of
from workbench.scratch import scratch_workspace
from workbench.secret_env import environment
from workbench.sessions.checkpoints import StartFiles, start_files
from workbench.sessions.decisions import DECISION_KINDS, recorded_calls
from workbench.sessions.fork import fork_point
from workbench.sessions.header import AgentSetup
from workbench.sessions.history import messages_of
from workbench.sessions.interventions import INTERVENTION_KINDS, edited_arguments
from workbench.sessions.log import of_kinds
from workbench.sessions.masks import Masks
from workbench.sessions.reader import Session, read_session
from workbench.sessions.rerun import RecordedRun, RerunReport, compare, recorded_runs
from workbench.sessions.trust import (
    RunKind,
    check_workspace,
    needs_starting,
    trusted,
    trusted_workspace,
)

if TYPE_CHECKING:
    from workbench.agent import Agent
    from workbench.mcp.config import McpServerConfig
    from workbench.providers.settings import OpenAISettings

ApproveChoice = Literal["recorded", "all", "none", "rules"]
"""How a re-run answers calls: the recorded decisions, or the rules with a policy."""


def scenario_of(session: Session) -> Scenario | None:
    """The scripted scenario the session ran (None for a live model)."""
    data = session.header.scenario_data
    return Scenario.model_validate(data) if data is not None else None


def _scratch(scenario: Scenario | None) -> Any:
    """Makes a fresh copy of the scenario's files (None without a scenario)."""
    return None if scenario is None else lambda: scratch_workspace(scenario)


def recorded_servers(setup: AgentSetup | None) -> list[McpServerConfig]:
    """The MCP servers a recorded setup names (started only if the caller trusts it)."""
    from workbench.mcp.config import McpServerConfig

    recorded = setup.mcp_servers if setup is not None else []
    return [
        McpServerConfig(
            name=s.name,
            command=tuple(s.command) if s.command is not None else None,
            url=s.url,
            cwd=s.cwd,
            source="session",
        )
        for s in recorded
    ]


# -- fork ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ForkChoice:
    """A model a fork can continue with."""

    label: str
    settings: OpenAISettings | None = None
    """OpenAI-compatible settings; None runs the recorded scripted scenario."""


@dataclass(frozen=True)
class ForkRequest:
    """What the replay app returns when the user forks."""

    turn: int
    choice: ForkChoice


def fork_choices(session: Session, flag_settings: OpenAISettings | None) -> list[ForkChoice]:
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
        key = environment().get("OPENAI_API_KEY")
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


def start_workspace(
    session: Session,
    position: int,
    workspace: Path | None,
    in_place: bool | None,
    at: str,
    kind: RunKind,
) -> StartFiles:
    """Where a fork or a re-run starts (see `sessions.checkpoints.start_files`): the
    recorded files restored into `workspace` (new or empty) or a scratch directory;
    `workspace` as it is when it is not empty or with `in_place`; for a session from
    before checkpoints, `workspace` or else a fresh copy of the scenario's files. Never
    the path the session holds.

    Raises:
        ValueError: `/` or the home directory, nothing to run in, a directory that is
            not empty to restore into, or a blob missing from the store.
    """
    if workspace is not None:
        check_workspace(workspace, kind)
    scratch = _scratch(scenario_of(session))
    return start_files(
        session,
        position,
        workspace=workspace,
        in_place=in_place,
        at=at,
        fallback=lambda: trusted_workspace(workspace, scratch, session.header.workspace, kind),
        scratch=scratch,
    )


def user_rules_file(start: StartFiles, named: Path | None) -> Path:
    """The rules file a run made from a session follows when no `--rules` is given:
    the user's own, never one the session could have put there.

    The workspace's `.workbench/rules.toml` only when the user named that directory and
    nothing from the session was written into it; otherwise (a scratch directory, or
    recorded files restored) the one of the directory the user is in. Scenario seeding
    and restoring refuse `.workbench/` too (`workbench.scratch.seed`,
    `sessions.checkpoints.unsafe`): this makes the rules independent of both.
    """
    from workbench.permissions import RULES_FILE

    if named is not None and start.restored is None and start.workspace == named:
        return named / RULES_FILE
    return Path.cwd() / RULES_FILE


def fork_options(
    session: Session,
    request: ForkRequest,
    *,
    workspace: Path | None = None,
    in_place: bool | None = None,
    pace: float | None = None,
    session_path: Path | None = None,
) -> RunOptions:
    """The `RunOptions` of a fork: its model, workspace, history and new session file.

    Args:
        workspace: where the fork's tools run, as the user named it: the files as they
            were at the fork point are restored into it if it is new or empty.
            Default: a scratch directory with those files; for a session recorded before
            checkpoints, a fresh copy of the recorded scenario's files. The workspace
            path stored in the session is never used on its own: without either the
            caller must name the directory. `/` and the home directory are refused.
        in_place: True: run in `workspace` as it is; False: restore into it, refusing
            one that is not empty; None: restore unless it is not empty.
        pace: scripted streaming speed (None: the app's default).
        session_path: the new session file (None: a new one in the default directory).

    Raises:
        ValueError: no workspace to run in, or `/` or the home directory.
    """
    scenario = scenario_of(session)
    point = fork_point(session, request.turn)
    at = f"the end of turn {point.parent.turn}" if point.parent.turn else "the start"
    start = start_workspace(session, point.parent.events, workspace, in_place, at, "fork")
    point.notes.insert(0, f"workspace: {start.description}")
    setup = session.header.setup
    rebuild: dict[str, Any] = {}
    if setup is not None:
        rebuild["builtin_tools"] = setup.builtin_tools
        if needs_starting(setup) and trusted(setup):  # never code a stranger recorded
            rebuild["tool_specs"] = list(setup.tool_specs)
            rebuild["project_dir"] = Path(setup.project_dir) if setup.project_dir else None
            rebuild["mcp_servers"] = recorded_servers(setup)
    return RunOptions(
        scenario=scenario if scenario is not None else "demo",
        workspace=start.workspace,
        pace=pace_of(pace, headless=False),
        provider_settings=request.choice.settings,
        session=session_path,
        rules_file=user_rules_file(start, workspace),
        fork=point,
        breakpoints=list(point.breakpoints),
        simulated_wire=True,
        **rebuild,
    )


# -- re-run ----------------------------------------------------------------------------


async def rerun(
    session: Session | Path | str,
    *,
    workspace: Path | None = None,
    in_place: bool | None = None,
    approve: ApproveChoice = "recorded",
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    rules_file: Path | None = None,
    tools: list[AgentTool] | None = None,
    record_to: Path | None = None,
    tool_abort_grace: float = 2.0,
    setup: AgentSetup | None = None,
    mcp_servers: list[McpServerConfig] | None = None,
    ignore: Sequence[str] = (),
    caps: ContentCaps | None = None,
) -> RerunReport:
    """Re-run `session`'s tool flow on the real tools; compare every result.

    Args:
        session: a session, or the path of a session file.
        workspace: where the tools run: the files as they were when the recording
            started are restored into it if it is new or empty. Default: a scratch
            directory with those files; for a session recorded before checkpoints, a
            fresh copy of the recorded scenario's files. The workspace path stored in
            the session is never used on its own (a session file can say anything):
            without either the caller must name the directory. `/` and the home
            directory are refused.
        in_place: True: run in `workspace` as it is; False: restore into it, refusing
            one that is not empty; None: restore unless it is not empty.
        approve: "recorded" (the default): each call the same as recorded gets the
            recorded decision (`workbench.rerun_hooks`), any other is judged by the
            rules alone; "all", "none", "rules": every call is judged by the rules, and
            "ask" is answered by that policy (a re-run has nobody to ask).
        rules_file: the rules file (default: the user's own, `user_rules_file`; never one
            the session brought).
        tools: the tools (default: the built-in tools bound to the workspace).
        record_to: also record the re-run as a new session there.
        setup: an `AgentSetup` to build the agent from instead (its built-ins, its
            `--tools` specs, its MCP servers, started for the re-run and stopped after).
            The caller decides whether a recorded setup may be trusted.
        mcp_servers: `McpServerConfig`s that replace the setup's servers.
        ignore: regular expressions of volatile text masked in both results before
            they are compared (`workbench.sessions.masks`).
        caps: the caps on content (default: the `[limits]` of the user's config file,
            as for a live run; never caps a session carries).

    Raises:
        ValueError: no workspace to run in, `/` or the home directory, a setup whose
            tools do not load, an `ignore` pattern that does not compile, or a config
            file whose `[limits]` cannot be read.
        workbench.sessions.SessionError: a path to a file that is not a session.
    """
    if not isinstance(session, Session):
        session = read_session(Path(session))
    masks = Masks(ignore)
    caps = caps if caps is not None else config_caps(None)
    header = session.header
    if header.model.provider == "proxy" and tools is None:
        raise ValueError(
            "this session was recorded by `workbench proxy`: its tools belong to the agent "
            "that ran them, so there is nothing here to re-run them with (replay and export work)"
        )
    scenario = scenario_of(session)
    named = workspace
    start = start_workspace(session, 0, workspace, in_place, "the start", "re-run")
    workspace = start.workspace
    report = RerunReport(workspace=workspace, workspace_note=start.description)
    model = RecordedModel()
    if tools is not None:  # the caller's tools replace the setup's, servers included
        servers = []
    else:
        servers = recorded_servers(setup) if mcp_servers is None else list(mcp_servers)
    runtime = build_runtime(
        RunOptions(
            scenario=scenario if scenario is not None else "demo",
            stream_fn=model,
            model=Model(
                id=header.model.id, provider=header.model.provider, base_url=header.model.base_url
            ),
            system_prompt=header.system_prompt,
            workspace=workspace,
            tools=tools,
            builtin_tools=setup.builtin_tools if setup is not None else None,
            tool_specs=list(setup.tool_specs) if setup is not None else [],
            project_dir=Path(setup.project_dir) if setup and setup.project_dir else None,
            mcp_servers=servers,
            approve="rules" if approve == "recorded" else approve,
            allow=list(allow),
            ask=list(ask),
            deny=list(deny),
            rules_file=rules_file or user_rules_file(start, named),
            tool_abort_grace=tool_abort_grace,
            session=record_to,
            record=record_to is not None,
            caps=caps,
        )
    )
    agent = runtime.agent
    edits = edited_arguments(of_kinds(session.events, INTERVENTION_KINDS))
    replay = RecordedEdits(edits)
    agent.on_arguments_failed = replay.arguments_failed
    decisions: ReplayedDecisions | None = None
    if approve == "recorded":
        calls = recorded_calls(of_kinds(session.events, DECISION_KINDS))
        decisions = ReplayedDecisions(calls, replay, runtime.gate, agent.publish)
        stepper = runtime.stepper.before_tool_call if runtime.stepper is not None else None
        agent.before_tool_call = chain_before(decisions, stepper)
    else:  # the edit is put back first, so the gate judges the arguments that will run
        agent.before_tool_call = chain_before(replay.before_tool_call, agent.before_tool_call)
    now: list[ToolResultMessage] = []
    files = FileChecks(session, workspace, restored=start.restored is not None)
    changed: dict[str, list[str]] = {}

    def collect(event: Any, _signal: Any = None) -> None:
        if event.type == "message_end" and isinstance(event.message, ToolResultMessage):
            now.append(event.message)
        elif event.type == "tool_execution_end":
            changed.setdefault(event.tool_call_id, []).extend(files.after_call(event.tool_call_id))

    agent.subscribe(collect)
    runs = recorded_runs(session.events)
    by_hand = [e.message.tool_calls[0].id for e in of_kinds(session.events, ["hand_call"])]
    if by_hand:  # a person's calls, outside the model's transcript: not part of its flow
        report.warnings.append(
            f"not re-run: {len(by_hand)} call(s) made by hand ({', '.join(by_hand[:5])}"
            f"{', …' if len(by_hand) > 5 else ''}); results that depended on what they "
            "changed may differ"
        )
    hub = runtime.mcp
    with contextlib.chdir(workspace):  # your tools open relative paths from the workspace
        if hub is None:
            await _replay_all(agent, model, runs, report, header, files)
        else:
            from workbench.mcp.hub import describe_failure

            async with hub.attach(agent):
                report.warnings += [describe_failure(c) for c in hub.failed] + hub.refused
                await _replay_all(agent, model, runs, report, header, files)
        report.files = files.at_end()
    recorded = [m for m in messages_of(session.events) if isinstance(m, ToolResultMessage)]
    requested = [call.id for run in runs for r in run.replies for call in r.tool_calls]
    report.calls = compare(recorded, now, requested, masks)
    for outcome in report.calls:
        if outcome.tool_call_id in edits and not outcome.note:
            outcome.note = f"ran as edited by the user {edits[outcome.tool_call_id][1]}"
        if decisions is not None:
            outcome.diverged(decisions.divergences.get(outcome.tool_call_id, []))
        if outcome.status != "skipped":
            outcome.diverged(changed.pop(outcome.tool_call_id, []))
    return report


async def _replay_all(
    agent: Agent,
    model: RecordedModel,
    runs: list[RecordedRun],
    report: RerunReport,
    header: Any,
    files: FileChecks,
) -> None:
    missing = sorted({t.name for t in header.tools} - {t.name for t in agent.state.tools})
    if missing:
        report.warnings.append(f"tools recorded but not available now: {', '.join(missing)}")
    for number, run in enumerate(runs, 1):
        count, problems = files.before_run(number)
        if count:
            report.notes.append(f"run {number}: {count} file(s) edited by hand put back first")
        report.warnings += [f"run {number}: a hand edit not put back: {p}" for p in problems]
        await _replay_run(agent, model, run, number, report)


async def _replay_run(
    agent: Agent, model: RecordedModel, run: RecordedRun, number: int, report: RerunReport
) -> None:
    model.load(run.replies)
    injected = deque(run.injected)

    def steering() -> list[Any]:
        due: list[Any] = []
        while injected and injected[0][0] <= model.served:
            due.append(injected.popleft()[1])
        return due

    agent.get_steering_messages = steering
    if run.prompts:
        await agent.prompt(run.prompts)
    elif agent.state.messages and not isinstance(agent.state.messages[-1], AssistantMessage):
        await agent.continue_()
    else:
        report.warnings.append(f"run {number}: nothing to continue from; skipped it")
        return
    messages = agent.state.messages
    if messages and any(messages[-1] is s for s in model.sentinels):
        messages.pop()  # the made-up end of a run the recording cut short
    if model.served < len(run.replies):
        report.warnings.append(
            f"run {number}: ended after {model.served} of {len(run.replies)} recorded replies"
        )
