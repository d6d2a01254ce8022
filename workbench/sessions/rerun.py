"""Re-run: the recorded model replies against the real tools, compared call by call.

A recorded session holds every reply the model gave. Playing those replies back
through the real loop, with the real tools and today's permission rules, re-runs
the whole tool flow without a model; where a tool's result now differs from the
recording, something changed (the tool, the workspace, the rules). That makes any
session a regression test for its tool flow.

The replies are replayed as recorded whatever the tools answer now, so the model
side never diverges: only results are compared (their content and `is_error`;
`details` often carry timings and are not compared). Runs are replayed in order:
each with its recorded prompts (or as a continue, for a fork), and user messages
that arrived mid-run (steering, follow-ups) are injected after the same reply.
Calls whose recorded result was written by a person (injected) or cut short by an
abort are reported but not compared: nothing real produced them. Calls whose
arguments a person edited run with the edited arguments (what ran then), judged by
today's rules like any other, and their outcome says so.
"""

from __future__ import annotations

import difflib
import json
import os
from collections import Counter, deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.agent import (
    Agent,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
    ToolResultMessage,
)
from workbench.providers.stream_builder import StreamBuilder
from workbench.sessions.history import messages_of
from workbench.sessions.interventions import INTERVENTION_KINDS, edited_arguments
from workbench.sessions.log import of_kinds
from workbench.sessions.reader import Session

Status = Literal["same", "differs", "missing", "extra", "skipped"]


@dataclass
class RecordedRun:
    """One agent run of the recording: what started it and what the model said."""

    prompts: list[Any] = field(default_factory=list)
    """The user messages that started it (none: the run was a continue)."""
    replies: list[AssistantMessage] = field(default_factory=list)
    injected: list[tuple[int, Any]] = field(default_factory=list)
    """(replies before it, user message): steering and follow-ups, in order."""


def recorded_runs(events: Sequence[Any]) -> list[RecordedRun]:
    """Split the events into runs (at each `agent_start`)."""
    runs: list[RecordedRun] = []
    for event in of_kinds(events, ["agent_start", "message_end"]):
        if event.type == "agent_start":
            runs.append(RecordedRun())
        elif event.type == "message_end" and runs:
            message, run = event.message, runs[-1]
            if isinstance(message, AssistantMessage):
                run.replies.append(message)
            elif message.role == "user":
                if run.replies:
                    run.injected.append((len(run.replies), message))
                else:
                    run.prompts.append(message)
    return runs


class RecordedModel:
    """A stream function that plays recorded replies, streaming them like a provider."""

    def __init__(self) -> None:
        self._queue: deque[AssistantMessage] = deque()
        self.served = 0
        self.sentinels: list[AssistantMessage] = []
        """Replies made up because the run asked for more than was recorded."""

    def load(self, replies: Sequence[AssistantMessage]) -> None:
        self._queue = deque(replies)
        self.served = 0

    async def __call__(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        builder = StreamBuilder(model)
        for event in builder.start():
            yield event
        if not self._queue:
            sentinel = AssistantMessage(stop_reason="stop", model=model.id, provider=model.provider)
            self.sentinels.append(sentinel)
            yield AssistantMessageEvent(type="done", message=sentinel)
            return
        reply = self._queue.popleft()
        self.served += 1
        events: list[AssistantMessageEvent] = []
        for block in reply.content:
            if block.type == "text":
                events += builder.text(block.text)
            elif block.type == "thinking":
                events += builder.thinking(block.thinking)
            else:
                index, started = builder.begin_tool_call(block.id, block.name)
                raw = block.raw_arguments
                events += started + builder.tool_call_delta(
                    index, raw if raw is not None else json.dumps(block.arguments)
                )
        events += builder.close_all()
        for event in events:
            yield event
        failed = reply.stop_reason in ("error", "aborted")
        yield AssistantMessageEvent(
            type="error" if failed else "done", message=reply.model_copy(deep=True)
        )


@dataclass
class CallOutcome:
    """One tool call, then and now."""

    tool_call_id: str
    tool_name: str
    status: Status
    recorded: ToolResultMessage | None = None
    now: ToolResultMessage | None = None
    note: str = ""

    def diff(self, context: int = 2, limit: int = 40) -> list[str]:
        """A unified diff of the result text, then and now (at most `limit` lines)."""
        before = self.recorded.text.splitlines() if self.recorded else []
        after = self.now.text.splitlines() if self.now else []
        lines = list(difflib.unified_diff(before, after, "recorded", "now", n=context, lineterm=""))
        if self.recorded and self.now and self.recorded.is_error != self.now.is_error:
            lines.insert(0, f"is_error: {self.recorded.is_error} -> {self.now.is_error}")
        if len(lines) > limit:
            lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
        return lines


@dataclass
class RerunReport:
    calls: list[CallOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    workspace: Path | None = None

    @property
    def differs(self) -> bool:
        """Anything differs: a result, or a call made or missing now."""
        return any(c.status in ("differs", "missing", "extra") for c in self.calls)

    def count(self, status: Status) -> int:
        return sum(1 for c in self.calls if c.status == status)


def _same(a: ToolResultMessage, b: ToolResultMessage) -> bool:
    return a.is_error == b.is_error and [c.model_dump() for c in a.content] == [
        c.model_dump() for c in b.content
    ]


def _not_real(message: ToolResultMessage) -> str:
    """Why a recorded result cannot be compared ("" when it can)."""
    if message.injected:
        return "the recorded result was injected by a person"
    details = message.details
    if message.is_error and (
        message.text.startswith("Operation aborted")
        or (isinstance(details, dict) and details.get("aborted") is True)
    ):
        return "the recorded call was aborted"
    return ""


def compare(
    recorded: Sequence[ToolResultMessage],
    now: Sequence[ToolResultMessage],
    requested: Sequence[str] = (),
) -> list[CallOutcome]:
    """Match results by call id (and occurrence, for repeated ids), in recorded order.

    Args:
        requested: the ids of every call the recorded model asked for; one of them
            with a result now but none recorded (the recording ends first) is not
            compared, rather than reported as a call made only now.
    """
    unanswered = Counter(requested) - Counter(m.tool_call_id for m in recorded)
    pending: dict[str, deque[ToolResultMessage]] = {}
    for message in now:
        pending.setdefault(message.tool_call_id, deque()).append(message)
    outcomes: list[CallOutcome] = []
    for then in recorded:
        queue = pending.get(then.tool_call_id)
        current = queue.popleft() if queue else None
        why = _not_real(then)
        if current is None:
            status: Status = "skipped" if why else "missing"
        elif why:
            status = "skipped"
        else:
            status = "same" if _same(then, current) else "differs"
        outcomes.append(CallOutcome(then.tool_call_id, then.tool_name, status, then, current, why))
    for queue in pending.values():
        for extra in queue:
            if unanswered[extra.tool_call_id] > 0:
                unanswered[extra.tool_call_id] -= 1
                note = "the recording ends before its result"
                outcomes.append(
                    CallOutcome(extra.tool_call_id, extra.tool_name, "skipped", None, extra, note)
                )
            else:
                outcomes.append(
                    CallOutcome(extra.tool_call_id, extra.tool_name, "extra", None, extra)
                )
    return outcomes


def check_workspace(path: Path) -> None:
    """Refuse (ValueError) `/` and the home directory as a re-run's workspace."""
    real = os.path.realpath(path)
    if real in (os.path.realpath("/"), os.path.realpath(Path.home())):
        raise ValueError(
            f"refusing to re-run tools in {str(path)!r}: the filesystem root and the home "
            "directory are never a workspace; pass --workspace DIR with a project directory"
        )


async def rerun(
    session: Session,
    *,
    workspace: Path | None = None,
    approve: Literal["all", "none", "rules"] = "rules",
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    rules_file: Path | None = None,
    tools: list[Any] | None = None,
    record_to: Path | None = None,
    tool_abort_grace: float = 2.0,
    setup: Any = None,
    mcp_servers: list[Any] | None = None,
) -> RerunReport:
    """Re-run `session`'s tool flow on the real tools; compare every result.

    Args:
        workspace: where the tools run. Default: a fresh copy of the recorded
            scenario's files. The workspace path stored in the session is never
            used on its own (a session file can say anything): without a scenario
            the caller must name the directory. `/` and the home directory are refused.
        approve: how "ask" rules are answered (a re-run has nobody to ask).
        tools: the tools (default: the built-in tools bound to the workspace).
        record_to: also record the re-run as a new session there.
        setup: an `AgentSetup` to build the agent from instead (its built-ins, its
            `--tools` specs, its MCP servers, started for the re-run and stopped after).
            The caller decides whether a recorded setup may be trusted.
        mcp_servers: `McpServerConfig`s that replace the setup's servers.

    Raises:
        ValueError: no workspace to run in, `/` or the home directory, or a setup whose
            tools do not load.
    """
    from workbench.permissions import PermissionGate, chain_before
    from workbench.redact import redactor_for
    from workbench.sessions.fork import scenario_of
    from workbench.sessions.recorder import start_recording
    from workbench.scratch import scratch_workspace

    header = session.header
    if header.model.provider == "proxy" and tools is None:
        raise ValueError(
            "this session was recorded by `workbench proxy`: its tools belong to the agent "
            "that ran them, so there is nothing here to re-run them with (replay and export work)"
        )
    scenario = scenario_of(session)
    if workspace is None:
        if scenario is None:
            raise ValueError(
                f"the session ran in {header.workspace or '(unknown)'!r}, and a re-run does "
                "not trust a path from a session file: pass --workspace DIR"
            )
        workspace = scratch_workspace(scenario)
    check_workspace(workspace)
    report = RerunReport(workspace=workspace)
    gate = PermissionGate.for_workspace(
        workspace,
        policy=approve,
        allow=list(allow),
        ask=list(ask),
        deny=list(deny),
        rules_file=rules_file,
    )
    hub = None
    if tools is None:
        tools, hub = setup_tools(setup, workspace, mcp_servers, gate)
    model = RecordedModel()
    agent = Agent(
        stream_fn=model,
        model=Model(
            id=header.model.id, provider=header.model.provider, base_url=header.model.base_url
        ),
        system_prompt=header.system_prompt,
        tools=tools,
        tool_abort_grace=tool_abort_grace,
    )
    agent.redact = redactor_for(None, [c.config for c in hub.connections] if hub else [])
    if record_to is not None:
        start_recording(agent, workspace=workspace, scenario=scenario, path=record_to, setup=setup)
    gate.publish = agent.publish
    edits = edited_arguments(of_kinds(session.events, INTERVENTION_KINDS))
    replay = _RecordedEdits(edits)
    agent.before_tool_call = chain_before(replay.before_tool_call, gate)  # the gate judges the edit
    agent.on_arguments_failed = replay.arguments_failed
    now: list[ToolResultMessage] = []

    def collect(event: Any, _signal: Any = None) -> None:
        if event.type == "message_end" and isinstance(event.message, ToolResultMessage):
            now.append(event.message)

    agent.subscribe(collect)
    runs = recorded_runs(session.events)
    by_hand = [e.message.tool_calls[0].id for e in of_kinds(session.events, ["hand_call"])]
    if by_hand:  # a person's calls, outside the model's transcript: not part of its flow
        report.warnings.append(
            f"not re-run: {len(by_hand)} call(s) made by hand ({', '.join(by_hand[:5])}"
            f"{', …' if len(by_hand) > 5 else ''}); results that depended on what they "
            "changed may differ"
        )
    if hub is None:
        await _replay_all(agent, model, runs, report, header)
    else:
        async with hub.attach(agent):
            from workbench.mcp.hub import describe_failure

            report.warnings += [describe_failure(c) for c in hub.failed] + hub.refused
            await _replay_all(agent, model, runs, report, header)
    recorded = [m for m in messages_of(session.events) if isinstance(m, ToolResultMessage)]
    requested = [call.id for run in runs for r in run.replies for call in r.tool_calls]
    report.calls = compare(recorded, now, requested)
    for outcome in report.calls:
        if outcome.tool_call_id in edits and not outcome.note:
            outcome.note = f"ran as edited by the user {edits[outcome.tool_call_id][1]}"
    return report


def setup_tools(
    setup: Any, workspace: Path, mcp_servers: list[Any] | None = None, gate: Any = None
) -> tuple[list[Any], Any]:
    """The tools of an `AgentSetup` (None: the built-ins), and an `McpHub` for its
    servers or `mcp_servers` (None when there are none); with `gate`, the reading
    tools show only what it lets them read."""
    from workbench.mcp.config import McpServerConfig
    from workbench.runtime import builtin_tool_list

    names = setup.builtin_tools if setup is not None else None
    tools = builtin_tool_list(workspace, names, gate=gate)
    if setup is not None and setup.tool_specs:
        from workbench.project import load_tools, refuse_duplicates

        base = Path(setup.project_dir) if setup.project_dir else None
        tools += load_tools(setup.tool_specs, base)
        refuse_duplicates(tools)
    if mcp_servers is None:
        recorded = setup.mcp_servers if setup is not None else []
        mcp_servers = [
            McpServerConfig(name=s.name, command=s.command, url=s.url, cwd=s.cwd, source="session")
            for s in recorded
        ]
    if not mcp_servers:
        return tools, None
    from workbench.mcp import McpHub

    return tools, McpHub(mcp_servers, roots=[workspace])


async def _replay_all(
    agent: Agent, model: RecordedModel, runs: list[RecordedRun], report: RerunReport, header: Any
) -> None:
    missing = sorted({t.name for t in header.tools} - {t.name for t in agent.state.tools})
    if missing:
        report.warnings.append(f"tools recorded but not available now: {', '.join(missing)}")
    for number, run in enumerate(runs, 1):
        await _replay_run(agent, model, run, number, report)


class _RecordedEdits:
    """Puts a person's recorded edits back where they were made: before the call runs,
    or (for arguments that failed) into the pipeline again."""

    def __init__(self, edits: dict[str, tuple[dict[str, Any], str]]) -> None:
        self.edits = edits
        self.retried: set[str] = set()

    def before_tool_call(self, ctx: Any, _signal: Any = None) -> Any:
        from workbench.agent import BeforeToolCallResult
        from workbench.permissions.edits import InvalidEdit, revalidate

        edit = self.edits.get(ctx.tool_call.id)
        if edit is None:
            return None
        try:
            ctx.args = revalidate(ctx.tool, edit[0])
        except InvalidEdit as exc:
            return BeforeToolCallResult(
                block=True, reason=f"The recorded edit is no longer valid: {exc}"
            )
        return None

    def arguments_failed(self, ctx: Any, _signal: Any = None) -> dict[str, Any] | None:
        call_id = ctx.tool_call.id
        if call_id in self.retried or call_id not in self.edits:
            return None
        self.retried.add(call_id)
        return self.edits[call_id][0]


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
