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
abort are reported but not compared: nothing real produced them.
"""

from __future__ import annotations

import difflib
import json
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
    for event in events:
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
) -> RerunReport:
    """Re-run `session`'s tool flow on the real tools; compare every result.

    Args:
        workspace: where the tools run. Default: a fresh scratch copy of the recorded
            scenario's files, else the recorded workspace (if it still exists).
        approve: how "ask" rules are answered (a re-run has nobody to ask).
        tools: the tools (default: the built-in tools bound to the workspace).
        record_to: also record the re-run as a new session there.

    Raises:
        ValueError: no workspace to run in.
    """
    from workbench.permissions import PermissionGate
    from workbench.runtime import builtin_tool_list
    from workbench.sessions.fork import scenario_of
    from workbench.sessions.recorder import start_recording
    from workbench.workspace import scratch_workspace

    header = session.header
    if header.model.provider == "proxy" and tools is None:
        raise ValueError(
            "this session was recorded by `workbench proxy`: its tools belong to the agent "
            "that ran them, so there is nothing here to re-run them with (replay and export work)"
        )
    scenario = scenario_of(session)
    if workspace is None:
        if scenario is not None:
            workspace = scratch_workspace(scenario)
        elif header.workspace and Path(header.workspace).is_dir():
            workspace = Path(header.workspace)
        else:
            where = header.workspace or "(none)"
            raise ValueError(f"the recorded workspace {where} is gone: pass --workspace DIR")
    report = RerunReport(workspace=workspace)
    tools = tools if tools is not None else builtin_tool_list(workspace)
    missing = sorted({t.name for t in header.tools} - {t.name for t in tools})
    if missing:
        report.warnings.append(f"tools recorded but not available now: {', '.join(missing)}")
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
    if record_to is not None:
        start_recording(agent, workspace=workspace, scenario=scenario, path=record_to)
    agent.before_tool_call = PermissionGate.for_workspace(
        workspace,
        publish=agent.publish,
        policy=approve,
        allow=list(allow),
        ask=list(ask),
        deny=list(deny),
        rules_file=rules_file,
    )
    now: list[ToolResultMessage] = []

    def collect(event: Any, _signal: Any = None) -> None:
        if event.type == "message_end" and isinstance(event.message, ToolResultMessage):
            now.append(event.message)

    agent.subscribe(collect)
    for number, run in enumerate(recorded_runs(session.events), 1):
        await _replay_run(agent, model, run, number, report)
    recorded = [
        m
        for m in (e.message for e in session.events if e.type == "message_end")
        if isinstance(m, ToolResultMessage)
    ]
    requested = [
        call.id
        for run in recorded_runs(session.events)
        for r in run.replies
        for call in r.tool_calls
    ]
    report.calls = compare(recorded, now, requested)
    return report


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
