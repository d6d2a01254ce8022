"""Assemble a runnable agent from options: provider, tools, workspace, gate, stepper.

The CLI's headless mode, the Textual app and the tests all build their agent here,
so they run the same thing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from workbench.agent import Agent, AgentTool, Model, StreamFn
from workbench.permissions import PermissionGate, chain_before
from workbench.pricing import PriceTable
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.redact import Redactor, known_secrets
from workbench.sessions.recorder import start_recording
from workbench.stepper import Stepper
from workbench.workspace import scratch_workspace

ApprovePolicy = Literal["ask", "all", "none", "rules"]


@dataclass
class RunOptions:
    """Everything a run can be configured with (the CLI's flags, as data)."""

    scenario: str | Path | Scenario = "demo"
    """A built-in scenario name, a scenario JSON file, or a Scenario (for the scripted model)."""
    workspace: Path | None = None
    """Where tools run; None makes a scratch workspace seeded with the scenario's files."""
    pace: float = math.inf
    """Scripted streaming speed in characters per second (inf: instant)."""
    provider_settings: Any = None
    """OpenAI-compatible settings; None runs the scripted model."""
    tools: list[AgentTool] | None = None
    """Tools to offer; None means the built-in tools bound to the workspace."""
    tool_abort_grace: float = 2.0
    approve: ApprovePolicy = "ask"
    """How "ask" rules are answered: a person ("ask"), or a headless policy."""
    rules_file: Path | None = None
    """The rules file (default: <workspace>/.workbench/rules.toml)."""
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    step: bool = False
    """Start in step mode."""
    breakpoints: list[str] = field(default_factory=list)
    capture_chunks: bool = False
    """Keep each model response's raw streamed chunks for the network view."""
    slow_after: float = 10.0
    """Seconds after which a running call's elapsed time shows as a warning."""
    mcp: list[str] = field(default_factory=list)
    """MCP servers to start over stdio: command lines, as `--mcp` takes them."""
    mcp_urls: list[str] = field(default_factory=list)
    """MCP servers to connect to over streamable HTTP (`--mcp-url`)."""
    mcp_servers: list[Any] = field(default_factory=list)
    """More MCP servers as `workbench.mcp.McpServerConfig`s (the config file's)."""
    session: Path | None = None
    """The session file to record to (default: a new file in the user's data directory)."""
    record: bool = True
    """Append every bus event to the session file (see `workbench.sessions`)."""
    fork: Any = None
    """A `workbench.sessions.ForkPoint`: start from a recorded session's transcript."""
    simulated_wire: bool = False
    """The scripted model publishes the requests a real server would get (marked simulated).
    The command line turns it on. Off by default: each simulated request carries the whole
    transcript, as a real one does, so a long scripted run costs quadratic time with it."""
    prices: PriceTable = field(default_factory=PriceTable)
    """What each model's tokens cost (the config file's `[prices]`, then built-in ones)."""
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
    gate: Any = None
    """The PermissionGate behind before_tool_call (None: every call is allowed)."""
    stepper: Any = None
    """The Stepper (None: no pausing)."""
    extras: dict[str, Any] = field(default_factory=dict)
    slow_after: float = 10.0
    """Seconds after which a running call's elapsed time shows as a warning."""
    mcp: Any = None
    """The `workbench.mcp.McpHub` of the run's MCP servers (None: none). Nothing is
    started here: `async with runtime.mcp.attach(runtime.agent)` starts them and
    gives their tools to the agent (the app does it on mount, headless before the prompt)."""
    recorder: Any = None
    """The session Recorder on the bus (None when not recording)."""
    options: RunOptions | None = None
    """What the runtime was built from (`fresh()` builds the next run from it)."""

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


def builtin_tool_list(workspace: Path, pass_env: list[str] | None = None) -> list[AgentTool]:
    from tools import builtin_tools

    return builtin_tools(workspace, pass_env=pass_env or ())


def mcp_hub(options: RunOptions) -> Any:
    """An `McpHub` for the options' MCP servers, not started (None when there are none).

    Raises:
        ValueError: a `--mcp` command that does not split, or a URL that is not http(s).
    """
    if not (options.mcp or options.mcp_urls or options.mcp_servers):
        return None
    from workbench.mcp import McpHub, resolve_servers

    return McpHub(resolve_servers(options.mcp, options.mcp_urls, options.mcp_servers))


def build_runtime(options: RunOptions) -> Runtime:
    """Build the agent described by `options` (nothing runs yet).

    The gate answers `before_tool_call` first, then the stepper may pause; the
    stepper also pauses before model requests and after failed calls.
    """
    scenario: Scenario | None = None
    stream_fn: StreamFn
    wire_provider: Any = None
    """The provider that publishes wire events (set its `publish` once the agent exists)."""
    if options.provider_settings is None:
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

        wire_provider = OpenAIProvider(
            options.provider_settings, capture_chunks=options.capture_chunks
        )
        stream_fn, model = wire_provider, wire_provider.model
    workspace = options.workspace or scratch_workspace(scenario)
    tools = options.tools if options.tools is not None else builtin_tool_list(workspace, options.pass_env)
    hub = mcp_hub(options)
    fork = options.fork
    agent = Agent(
        stream_fn=stream_fn,
        model=model,
        system_prompt=fork.system_prompt if fork else scenario.system_prompt if scenario else "",
        tools=tools,
        messages=fork.messages if fork else (),
        tool_abort_grace=options.tool_abort_grace,
    )
    servers = [c.config for c in hub.connections] if hub is not None else []
    redactor = Redactor(known_secrets(options.provider_settings, servers))
    agent.redact = redactor if redactor else None
    recorder = None
    if options.record:  # first on the bus: an event is on disk before anyone acts on it
        recorder = start_recording(
            agent, workspace=workspace, scenario=scenario, path=options.session, fork=fork
        )
    gate = PermissionGate.for_workspace(
        workspace,
        publish=agent.publish,
        policy=options.approve,
        allow=options.allow,
        ask=options.ask,
        deny=options.deny,
        rules_file=options.rules_file,
    )
    stepper = Stepper(publish=agent.publish, enabled=options.step, breakpoints=options.breakpoints)
    agent.before_tool_call = chain_before(gate, stepper.before_tool_call)
    agent.after_tool_call = stepper.after_tool_call
    agent.stream_fn = stepper.wrap_stream_fn(stream_fn)
    agent.subscribe(stepper.on_event)
    if wire_provider is not None:
        wire_provider.publish = agent.publish
    prompt = scenario.prompt if scenario else ""
    return Runtime(
        agent, workspace, scenario, prompt, model, gate=gate, stepper=stepper, recorder=recorder,
        mcp=hub, slow_after=options.slow_after, options=options,
    )
