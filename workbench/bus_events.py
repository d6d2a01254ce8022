"""Every event the bus carries: the loop's, plus the gate's, the stepper's and the wire's.

The loop's events live in `workbench.agent.events`. The permission gate, the stepper
and the providers publish the ones below onto the same bus (`Agent.publish`), so
the view fold, the recorder and replay see one ordered stream. `BusEvent` is the
discriminated union of all of them; `parse_event` reads one back from JSON.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from workbench.agent.events import AnyAgentEvent, ArgumentStage, Event
from workbench.agent.tool import AgentToolResult
from workbench.agent.types import Usage

# -- permission gate -----------------------------------------------------------------

Decision = Literal["allow", "deny"]
DecisionScope = Literal["once", "always_tool", "always_pattern"]
DecidedBy = Literal["user", "rule", "session", "policy", "abort", "recording"]
""""abort": the run (or the call) was aborted while the request waited; "recording": a
re-run gave the call the decision its recording shows (`rule` says who made it then)."""


class PermissionRequestEvent(Event):
    """The gate asks a person (or the headless policy) whether a call may run."""

    type: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    """The validated arguments the call would run with."""
    description: str = ""
    """The tool's description, for the dialog."""
    rule: str | None = None
    """The "ask" rule that caused the request, if one did (else the default)."""
    rule_source: str | None = None
    """Where that rule came from ("default", ".workbench/rules.toml:3", "--ask", ...)."""
    suggested_pattern: str | None = None
    """What "always allow calls like this" would add, e.g. `run_command(command="pytest *")`."""


class PermissionDecisionEvent(Event):
    """How a call's permission was settled, by whom, and how long the call waited."""

    type: Literal["permission_decision"] = "permission_decision"
    request_id: str | None = None
    """Set when a request was published; None when a rule decided at once."""
    tool_call_id: str
    tool_name: str
    decision: Decision
    scope: DecisionScope = "once"
    decided_by: DecidedBy
    rule: str | None = None
    """The rule that decided, as written (e.g. `run_command(command="pytest *")`)."""
    rule_source: str | None = None
    """Where that rule came from: "rules.toml:12", "--allow", "session", "default"."""
    reason: str | None = None
    """For a denial: the reason the model is told."""
    edited_args: dict[str, Any] | None = None
    """Arguments the person edited before allowing (already re-validated)."""
    waited_ms: float = 0.0


# -- stepper -------------------------------------------------------------------------

PausePoint = Literal["before_model", "before_tool", "after_tool", "invalid_arguments"]
""""invalid_arguments": a call's arguments failed the pipeline (`@invalid`, `@parse`,
`@unknown`, `@prepare`, `@validate`); an edit runs the pipeline again, otherwise the
error result goes to the model. "after_tool": an error result before the model sees
it (`@error`), whether or not the call ran; an inject replaces it."""
StepAction = Literal["step", "continue", "run_to_end", "edit", "inject", "abort"]


class StepModeEvent(Event):
    type: Literal["step_mode"] = "step_mode"
    enabled: bool
    breakpoints: list[str] = Field(default_factory=list)
    """Each breakpoint as text: a tool name, `tool(arg="pattern")`, or an `@` one
    (`@invalid`, `@parse`, `@unknown`, `@prepare`, `@validate`, `@error`)."""
    run_to_end: bool = False
    """Every pause is skipped until the current run ends (the "run to end" action)."""


class StepPausedEvent(Event):
    type: Literal["step_paused"] = "step_paused"
    pause_id: str
    point: PausePoint
    tool_call_id: str | None = None
    tool_name: str | None = None
    args: dict[str, Any] | None = None
    breakpoint: str | None = None
    """The breakpoint that hit; None when pausing at every point (step mode)."""
    failed_stage: ArgumentStage | None = None
    """At failed arguments: the stage that failed."""
    result: AgentToolResult | None = None
    """At an error result (`@error`): the result stopped on."""


class StepResumedEvent(Event):
    type: Literal["step_resumed"] = "step_resumed"
    pause_id: str
    action: StepAction
    waited_ms: float = 0.0
    edited_args: dict[str, Any] | None = None
    injected_result: AgentToolResult | None = None
    injected_is_error: bool = False


# -- the wire ------------------------------------------------------------------------


class ProviderRequestEvent(Event):
    """One model request, exactly as sent (auth headers and keys stripped)."""

    type: Literal["provider_request"] = "provider_request"
    request_id: str
    provider: str
    model: str
    url: str | None = None
    body: dict[str, Any]
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers sent with the request (configured ones; auth-bearing headers removed)."""
    repairs: list[str] = Field(default_factory=list)
    """What the provider changed in the transcript to make the request valid, one line each
    (dropped calls of an aborted reply, synthetic results for unanswered calls, ...)."""
    simulated: bool = False
    """Nothing was sent: the scripted model shows the body a real server would get."""
    sent_body: dict[str, Any] | None = None
    """Proxy mode: the request as the agent sent it, when the proxy forwarded a changed
    one (`body`); None when it forwarded the agent's request unchanged."""
    via: Literal["wire", "stream_fn"] = "wire"
    """"stream_fn": a stream_fn of your own was called; `body` is what the loop handed it
    (system prompt, messages, tools), not an HTTP body (the workbench sees no wire)."""


class ProviderResponseEvent(Event):
    """How that request went: status, timing, what the server said it was."""

    type: Literal["provider_response"] = "provider_response"
    request_id: str
    status: int | None = None
    server_model: str | None = None
    ttft_ms: float | None = None
    """Time to first token (first content chunk), from the request's start."""
    total_ms: float
    usage: Usage | None = None
    error: str | None = None
    chunks: list[str] | None = None
    """The raw streamed chunks (SSE data lines), when capture is on."""
    finish_reason: str | None = None
    """The finish reason exactly as the server sent it (before mapping to a stop reason)."""
    aborted: bool = False
    """The run's abort signal closed the response before it ended (`status` is what the
    server had answered by then)."""
    simulated: bool = False
    """The scripted model's reply: the timings are its own pacing, no server answered."""


class ResponseReleasedEvent(Event):
    """Proxy mode: the response as the agent received it, once the gate had decided.

    `changed` is False when the agent got the upstream's response byte for byte
    (then `chunks` and `body` are None: the response event's chunks are what it got)."""

    type: Literal["response_released"] = "response_released"
    request_id: str
    changed: bool = False
    held: bool = False
    """The response (or its tail, from the first tool call on) waited for the decisions."""
    chunks: list[str] | None = None
    """A changed streamed response: the SSE data lines the agent received."""
    body: dict[str, Any] | None = None
    """A changed whole response: the JSON the agent received."""
    removed: list[str] = Field(default_factory=list)
    """Ids of the calls taken out (their answers go to the model with the next request)."""
    continued: bool = False
    """Every call was taken out and the proxy answered them upstream itself: the reply
    goes on with the model's answer to that (the next request), not ended here."""


# -- run limits ----------------------------------------------------------------------


class RunLimitEvent(Event):
    """The run was stopped by a limit (`--max-turns`), after a complete turn."""

    type: Literal["run_limit"] = "run_limit"
    max_turns: int
    turns: int
    """Model turns the run had when it stopped."""

    @property
    def text(self) -> str:
        return (
            f"Stopped after {self.turns} model turns (--max-turns {self.max_turns}); "
            "the model still had tool calls to follow up on"
        )


# -- MCP servers ---------------------------------------------------------------------


class McpToolsChangedEvent(Event):
    """An MCP server changed its tool list during the run (`tools/list_changed`); the
    next model request has the new list."""

    type: Literal["mcp_tools_changed"] = "mcp_tools_changed"
    server: str
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)

    @property
    def text(self) -> str:
        change = ", ".join([*(f"+{n}" for n in self.added), *(f"-{n}" for n in self.removed)])
        return (
            f"MCP server {self.server} changed its tools ({change or 'same names'}); "
            "the next model request has the new list"
        )


class McpWireEvent(Event):
    """One JSON-RPC message between the workbench and an MCP server, as the wire view
    (F7, `w`) showed it: its JSON masked and cut the same way (`workbench.mcp.wire`).
    `timestamp` is when it passed. Past the wire's caps, one last event with no `text`
    says that the later messages with that server were not recorded."""

    type: Literal["mcp_wire"] = "mcp_wire"
    server: str
    outgoing: bool
    at: float
    """Seconds since the server's connection started."""
    summary: str
    method: str = ""
    text: str = ""


SamplingDecision = Literal["sent", "edited", "written", "declined", "failed"]


class McpSamplingEvent(Event):
    """An MCP server asked the run's model for a reply (`sampling/createMessage`), and
    how that went: sent as asked, edited by a person first, answered with a reply a
    person wrote (or changed), declined, or failed."""

    type: Literal["mcp_sampling"] = "mcp_sampling"
    server: str
    request: str
    """The last message of the request as sent (or as asked, if it was not sent), cut."""
    decision: SamplingDecision
    reply: str | None = None
    """The model's reply text, when it was sent and answered."""
    error: str | None = None
    """Why it was declined or failed."""

    @property
    def text(self) -> str:
        """One line: `↳ SERVER asked the model: REQUEST → REPLY` (or → declined: WHY)."""
        asked = f"↳ {self.server} asked the model: {_gist(self.request)}"
        if self.decision in ("sent", "edited", "written"):
            edited = {"edited": " (edited)", "written": " (reply written by the user)"}.get(
                self.decision, ""
            )
            return f"{asked}{edited} → {_gist(self.reply or '')}"
        why = f": {_gist(self.error)}" if self.error else ""
        return f"{asked} → {self.decision}{why}"


def _gist(text: str, limit: int = 120) -> str:
    """`text` on one line, cut to `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- ACP agents ----------------------------------------------------------------------

AcpNoticeKind = Literal["session", "plan", "mode", "commands", "usage", "info", "agent_stderr"]


class AcpNoticeEvent(Event):
    """What an ACP agent said that is neither a message nor a tool call: the session it
    opened, its plan, its current mode, its slash commands (see `workbench.acp`)."""

    type: Literal["acp_notice"] = "acp_notice"
    kind: AcpNoticeKind
    text: str
    """One line or a few, as the timeline shows it."""
    data: dict[str, Any] = Field(default_factory=dict)
    """The update as the agent sent it (JSON), for exports and replay."""


class ProxyNoticeEvent(Event):
    """Proxy mode: what the timeline says between messages: an item of a reply that is no
    call the agent runs (`upstream_item`: a web search, a remote MCP call the upstream
    ran itself, passed to the agent as it is), or a reply whose calls were all denied
    going on upstream (`continued`: the proxy answered them itself)."""

    type: Literal["proxy_notice"] = "proxy_notice"
    kind: Literal["upstream_item", "continued"]
    text: str
    """One line, as the timeline shows it."""
    item: dict[str, Any] = Field(default_factory=dict)
    """An upstream item as the upstream sent it (JSON)."""


class AcpCallUpdateEvent(Event):
    """What an ACP agent reported of one of its tool calls: its kind and title, a status
    change, its locations, a stage it does not report. A line of the call's history."""

    type: Literal["acp_call_update"] = "acp_call_update"
    tool_call_id: str
    tool_name: str
    label: str
    detail: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    """The `tool_call` / `tool_call_update` fields as the agent sent them (JSON)."""


WorkbenchEvent = (
    RunLimitEvent
    | McpToolsChangedEvent
    | McpSamplingEvent
    | McpWireEvent
    | PermissionRequestEvent
    | PermissionDecisionEvent
    | StepModeEvent
    | StepPausedEvent
    | StepResumedEvent
    | ProviderRequestEvent
    | ProviderResponseEvent
    | ResponseReleasedEvent
    | AcpNoticeEvent
    | AcpCallUpdateEvent
    | ProxyNoticeEvent
)
"""The events published by the gate, the stepper and the providers."""

BusEvent = Annotated[AnyAgentEvent | WorkbenchEvent, Field(discriminator="type")]
"""Everything on the bus: the loop's `AgentEvent`s and the `WorkbenchEvent`s."""

_ADAPTER: TypeAdapter[Any] = TypeAdapter(BusEvent)


def parse_event(data: str | bytes | dict[str, Any]) -> Any:
    """Read one bus event back from JSON text or a decoded dict."""
    if isinstance(data, dict):
        return _ADAPTER.validate_python(data)
    return _ADAPTER.validate_json(data)
