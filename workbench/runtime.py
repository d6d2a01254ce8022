"""Assemble a runnable agent from options: provider, tools, workspace, gate, stepper.

The CLI's headless mode, the Textual app and the tests all build their agent here,
so they run the same thing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agent import Agent, AgentTool, Model, StreamFn
from workbench.agent.content_caps import DEFAULT_CAPS, ContentCaps
from workbench.oversight import Oversight
from workbench.permissions import PermissionGate, Policy, chain_before
from workbench.pricing import PriceTable
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.redact import redactor_for
from workbench.scratch import scratch_workspace
from workbench.sessions.recorder import Recorder
from workbench.stepper import Stepper
from workbench.wiring import limit_turns, record_agent, supervise

if TYPE_CHECKING:
    from workbench.mcp import McpHub
    from workbench.mcp.capabilities import LogLevel
    from workbench.mcp.config import McpServerConfig
    from workbench.providers.settings import OpenAISettings
    from workbench.run_limits import TurnLimit
    from workbench.sessions.fork import ForkPoint
    from workbench.sessions.header import AgentSetup
    from workbench.workspace_scan import CheckpointCaps

ApprovePolicy = Policy


@dataclass
class RunOptions(Oversight):
    """Everything a run can be configured with (the CLI's flags, as data); the gate's and
    the stepper's options (`approve`, `allow`, `step`, ...) are `Oversight`'s."""

    scenario: str | Path | Scenario = "demo"
    """A built-in scenario name, a scenario JSON file, or a Scenario (for the scripted model)."""
    workspace: Path | None = None
    """Where tools run; None makes a scratch workspace seeded with the scenario's files."""
    pace: float = math.inf
    """Scripted streaming speed in characters per second (inf: instant)."""
    provider_settings: OpenAISettings | None = None
    """OpenAI-compatible settings; None runs the scripted model."""
    stream_fn: StreamFn | None = None
    """A model side of your own (with `model`), instead of the scenario or the provider:
    a re-run's `workbench.providers.recorded.RecordedModel`. It gets no wire events and
    answers no MCP server's sampling request."""
    model: Model | None = None
    """The model `stream_fn` stands for (what the transcript and session header name)."""
    tools: list[AgentTool] | None = None
    """Tools to offer; None means the built-in tools (see `builtin_tools`) bound to the
    workspace, plus the tools of `tool_specs`."""
    tool_specs: list[str] = field(default_factory=list)
    """Your own tools: `--tools` specs (files, modules, `:attr`), see `workbench.project`."""
    tool_specs_from: str = "--tools"
    """Where `tool_specs` were named, for messages: `--tools` or `workbench.toml tools`."""
    builtin_tools: list[str] | None = None
    """The built-in tools to offer, by name (None: all six; empty: none)."""
    project_dir: Path | None = None
    """Where tool specs are found and put on `sys.path` (default: the current directory)."""
    system_prompt: str | None = None
    """The system prompt (None: the scenario's own, or none for a live model)."""
    max_turns: int | None = None
    """Stop each run cleanly after this many model turns (None: no limit)."""
    tool_choice_sticky: bool = False
    """Keep a forced tool choice after the first tool call (default: it becomes auto)."""
    tool_abort_grace: float = 2.0
    capture_chunks: bool = False
    """Keep each model response's raw streamed chunks for the network view."""
    slow_after: float = 10.0
    """Seconds after which a running call's elapsed time shows as a warning."""
    mcp: list[str] = field(default_factory=list)
    """MCP servers to start over stdio: command lines, as `--mcp` takes them."""
    mcp_urls: list[str] = field(default_factory=list)
    """MCP servers to connect to over streamable HTTP (`--mcp-url`)."""
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    """More MCP servers as `workbench.mcp.McpServerConfig`s (the config file's)."""
    mcp_log_level: LogLevel | None = None
    """The log level asked of MCP servers that log (`--mcp-log-level`)."""
    session: Path | None = None
    """The session file to record to (default: a new file in the user's data directory)."""
    record: bool = True
    """Append every bus event to the session file (see `workbench.sessions`)."""
    checkpoints: CheckpointCaps | None = None
    """The `CheckpointCaps` of the workspace checkpoints the session records (None: the
    defaults; see `workbench.checkpointer`)."""
    fork: ForkPoint | None = None
    """Start from a recorded session's transcript, cut at one of its turns."""
    simulated_wire: bool = False
    """The scripted model publishes the requests a real server would get (marked simulated).
    The command line turns it on. Off by default: each simulated request carries the whole
    transcript, as a real one does, so a long scripted run costs quadratic time with it."""
    prices: PriceTable = field(default_factory=PriceTable)
    """What each model's tokens cost (the config file's `[prices]`, then built-in ones)."""
    caps: ContentCaps = DEFAULT_CAPS
    """Caps on images in tool results and on each model reply (the config file's `[limits]`)."""
    pass_env: list[str] = field(default_factory=list)
    """Environment variables `run_command` passes on beyond its allow-list (`--pass-env`)."""


@dataclass
class Runtime:
    agent: Agent
    workspace: Path
    scenario: Scenario | None
    prompt: str
    """The scenario's own first message ("" for a live model)."""
    model: Model
    gate: PermissionGate | None = None
    """The gate behind before_tool_call (None: every call is allowed)."""
    stepper: Stepper | None = None
    """The stepper (None: no pausing)."""
    slow_after: float = 10.0
    """Seconds after which a running call's elapsed time shows as a warning."""
    mcp: McpHub | None = None
    """The hub of the run's MCP servers (None: none). Nothing is started here:
    `async with runtime.mcp.attach(runtime.agent)` starts them and gives their tools
    to the agent (the app does it on mount, headless before the prompt)."""
    recorder: Recorder | None = None
    """The session recorder on the bus (None when not recording)."""
    turn_limit: TurnLimit | None = None
    """The limit of `--max-turns` (None: no limit)."""
    options: RunOptions | None = None
    """What the runtime was built from (`fresh()` builds the next run from it)."""
    not_offered: list[str] = field(default_factory=list)
    """Functions of your tool files left out, and why, one line each: said at start
    (stderr headless, a notification and the inspector's placeholder in the app)."""

    @property
    def prices(self) -> PriceTable:
        return self.options.prices if self.options is not None else PriceTable()

    @property
    def session_path(self) -> Path | None:
        """The session file this run records to (None when not recording)."""
        return None if self.recorder is None else self.recorder.path

    def fresh(self) -> Runtime:
        """A new runtime for a new run: the same options, a new session file and, unless
        a workspace was given, a new scratch workspace. This one stops recording.

        Raises:
            ValueError: the runtime was not built by `build_runtime`.
        """
        if self.options is None:
            raise ValueError("this runtime was not built from options")
        if self.recorder is not None:
            self.recorder.close()
        scenario = self.scenario if self.scenario is not None else self.options.scenario
        return build_runtime(replace(self.options, scenario=scenario, session=None, fork=None))


def pace_of(value: float | None, headless: bool) -> float:
    """Scripted streaming speed from `--pace` (None: instant headless, 400 cps in the app;
    0 or less: instant)."""
    if value is None:
        return math.inf if headless else 400.0
    return math.inf if value <= 0 else value


def builtin_tool_list(
    workspace: Path,
    names: list[str] | None = None,
    pass_env: list[str] | None = None,
    gate: PermissionGate | None = None,
) -> list[AgentTool]:
    """The built-in tools bound to `workspace`: all of them, or those named (in order);
    with `gate`, the reading tools show only what it lets them read.

    Raises:
        ValueError: a name that is not a built-in tool.
    """
    from workbench.tools import builtin_tools

    may_read = gate.may_read if gate is not None else None
    tools = builtin_tools(workspace, may_read, pass_env=pass_env or ())
    if names is None:
        return tools
    by_name = {t.name: t for t in tools}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(
            f"--builtin-tools: no built-in tool {', '.join(map(repr, unknown))} "
            f"(built-ins: {', '.join(by_name)}; or none)"
        )
    return [by_name[n] for n in names]


def run_tools(
    options: RunOptions,
    workspace: Path,
    gate: PermissionGate | None = None,
    not_offered: list[str] | None = None,
) -> list[AgentTool]:
    """The built-ins chosen, then the tools of the specs; no name may appear twice.
    `not_offered` hears the functions of the specs left out, and why.

    Raises:
        ValueError: an unknown built-in; `workbench.project.ToolSpecError` for a spec.
    """
    if options.tools is not None:
        return list(options.tools)
    tools = builtin_tool_list(workspace, options.builtin_tools, options.pass_env, gate)
    if options.tool_specs:
        from workbench.project import load_tools, refuse_duplicates

        tools += load_tools(
            options.tool_specs, options.project_dir, not_offered, options.tool_specs_from
        )
        refuse_duplicates(tools)
    return tools


def mcp_hub(options: RunOptions, workspace: Path | None = None) -> McpHub | None:
    """An `McpHub` for the options' MCP servers, not started (None when there are none);
    `workspace` is offered to them as their root.

    Raises:
        ValueError: a `--mcp` command that does not split, or a URL that is not http(s).
    """
    if not (options.mcp or options.mcp_urls or options.mcp_servers):
        return None
    from workbench.mcp import McpHub, resolve_servers

    servers = resolve_servers(options.mcp, options.mcp_urls, options.mcp_servers)
    roots = [workspace] if workspace is not None else []
    return McpHub(servers, roots=roots, log_level=options.mcp_log_level, approve=options.approve)


def own_files(options: RunOptions) -> list[Path]:
    """The run's own files the model's tools may not change unasked (the gate protects
    those inside the workspace): the MCP config files in use, the config file, the
    sessions directory."""
    from workbench.config_file import default_config_path
    from workbench.sessions.header import default_session_dir

    configs = {Path(s.source) for s in options.mcp_servers if Path(s.source).is_file()}
    sessions = options.session.parent if options.session is not None else default_session_dir()
    return [*sorted(configs), default_config_path(), sessions]


def build_runtime(options: RunOptions) -> Runtime:
    """Build the agent described by `options` (nothing runs yet).

    The gate answers `before_tool_call` first, then the stepper may pause; the
    stepper also pauses before model requests and after failed calls.
    """
    scenario: Scenario | None = None
    stream_fn: StreamFn
    wire_provider: Any = None
    """The provider that publishes wire events (set its `publish` once the agent exists)."""
    openai_provider: Any = None
    if options.stream_fn is not None:
        if options.model is None:
            raise ValueError("RunOptions.stream_fn needs the model it stands for (model=)")
        scenario = options.scenario if isinstance(options.scenario, Scenario) else None
        stream_fn, model = options.stream_fn, options.model
    elif options.provider_settings is None:
        scenario = (
            options.scenario
            if isinstance(options.scenario, Scenario)
            else Scenario.load(options.scenario)
        )
        provider = ScriptedProvider(scenario, chars_per_second=options.pace)
        stream_fn, model = provider, provider.model
        if options.simulated_wire:
            wire_provider = provider
    else:
        from workbench.providers.openai import OpenAIProvider

        wire_provider = openai_provider = OpenAIProvider(
            options.provider_settings,
            capture_chunks=options.capture_chunks,
            sticky_tool_choice=options.tool_choice_sticky,
        )
        stream_fn, model = wire_provider, wire_provider.model
    workspace = options.workspace or scratch_workspace(scenario)
    gate = PermissionGate.for_workspace(
        workspace,
        policy=options.approve,
        allow=options.allow,
        ask=options.ask,
        deny=options.deny,
        rules_file=options.rules_file,
        protect=own_files(options),
    )
    if options.fork is not None:
        keep_always_answers(gate, options.fork)
    not_offered: list[str] = []
    tools = run_tools(options, workspace, gate, not_offered)
    hub = mcp_hub(options, workspace)
    if hub is not None and options.stream_fn is None:
        hub.use_model(stream_fn, model)  # a server's sampling requests: the same model, unwrapped
    fork = options.fork
    if options.system_prompt is not None:
        system_prompt = options.system_prompt
    else:
        system_prompt = fork.system_prompt if fork else scenario.system_prompt if scenario else ""
    agent = Agent(
        stream_fn=stream_fn,
        model=model,
        system_prompt=system_prompt,
        tools=tools,
        messages=fork.messages if fork else (),
        tool_abort_grace=options.tool_abort_grace,
    )
    servers = [c.config for c in hub.connections] if hub is not None else []
    agent.redact = redactor_for(options.provider_settings, servers)
    agent.caps = options.caps
    if hub is not None:
        hub.mask(agent.redact)
    recorder = None
    if options.record:
        recorder = record_agent(
            agent,
            workspace,
            gate,
            path=options.session,
            checkpoints=options.checkpoints,
            scenario=scenario,
            fork=fork,
            setup=lambda: agent_setup(options, hub),
        )
    stepper = supervise(agent, gate, step=options.step, breakpoints=options.breakpoints)
    if fork is not None and fork.approved:  # the parent's approvals of the same calls
        from workbench.rerun_hooks import RecordedEdits, ReplayedDecisions

        replayed = ReplayedDecisions(fork.approved, RecordedEdits({}), gate, agent.publish)
        agent.before_tool_call = chain_before(replayed, stepper.before_tool_call)
    if wire_provider is not None:
        wire_provider.publish = agent.publish
    if openai_provider is not None:
        agent.subscribe(openai_provider.on_event)
    turn_limit = limit_turns(agent, options.max_turns)
    prompt = scenario.prompt if scenario else ""
    return Runtime(
        agent,
        workspace,
        scenario,
        prompt,
        model,
        gate=gate,
        stepper=stepper,
        recorder=recorder,
        mcp=hub,
        slow_after=options.slow_after,
        turn_limit=turn_limit,
        options=options,
        not_offered=not_offered,
    )


def keep_always_answers(gate: PermissionGate, fork: ForkPoint) -> None:
    """Give the fork's gate the parent's "always" answers, as the session rules they
    were (`ForkPoint.always` holds them only for a session this user's workbench
    signed); one that no longer parses is dropped with a note."""
    from workbench.permissions.rules import Rule

    for text in fork.always:
        try:
            gate.rules.add(Rule.parse(text, "allow", "session"))
        except ValueError as exc:  # a PatternError
            fork.notes.append(f"not kept: the answer {text!r} ({exc})")


def agent_setup(options: RunOptions, hub: McpHub | None) -> AgentSetup:
    """What the session header records to build this agent again (see `AgentSetup`)."""
    from workbench.sessions.header import AgentSetup, RecordedServer

    servers = [] if hub is None else [c.config for c in hub.connections]
    return AgentSetup(
        tool_specs=list(options.tool_specs),
        project_dir=str((options.project_dir or Path.cwd()).resolve()),
        builtin_tools=options.builtin_tools,
        mcp_servers=[
            RecordedServer(
                name=s.name,
                command=list(s.command) if s.command is not None else None,
                url=without_password(s.url),
                cwd=s.cwd,
            )
            for s in servers
        ],
    )


def without_password(url: str | None) -> str | None:
    """The URL with any `user:password@` dropped (headers and env are never recorded)."""
    if url is None:
        return None
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))
