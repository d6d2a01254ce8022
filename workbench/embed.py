"""Open the workbench on an `Agent` you built: `run_app`, `run_headless`, `attach`.

    import workbench
    agent = Agent(stream_fn=my_provider, model=my_model, tools=my_tools,
                  before_tool_call=my_hook)
    workbench.run_app(agent, workspace=".", rules="rules.toml")     # the app
    code = await workbench.run_headless(agent, "go", approve="rules") # or no app

Your `stream_fn`, model, tools, messages and hooks stay yours. The workbench adds
its own around them, in this order, and takes them away again when it returns:

- `before_tool_call`: **your hook first**, then the permission gate, then the
  stepper. Your hook sees the call first and may change its arguments; the gate then
  judges the arguments that will really run. The first hook that blocks a call (or
  answers it with a result) ends the chain: a deny from your hook or from the gate
  wins, and a denied call never pauses the stepper.
- `after_tool_call`: yours alone. An error result, once your hook has seen it, goes
  to the stepper (its `@error` breakpoint shows the result as the model will see it),
  and so do arguments that fail (`@invalid`).
- `stream_fn`: yours, wrapped by the stepper (a pause before each request in step mode).
- `should_stop_after_turn`: yours, then `max_turns` if given.

Everything is recorded to a session file as usual (`session=` picks the file).
Nothing here imports Textual until `run_app` needs it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.agent import Agent
from workbench.permissions import PermissionGate
from workbench.runtime import ApprovePolicy, Runtime
from workbench.secret_env import hide_environment
from workbench.wiring import limit_turns, record_agent, supervise

_ATTACHED = "_workbench_runtime"


@contextmanager
def attach(
    agent: Agent,
    *,
    workspace: str | Path | None = None,
    rules: str | Path | None = None,
    approve: ApprovePolicy = "ask",
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    step: bool = False,
    breakpoints: Sequence[str] = (),
    session: str | Path | None = None,
    record: bool = True,
    max_turns: int | None = None,
) -> Iterator[Runtime]:
    """Chain the gate and the stepper onto `agent` and record it, while inside.

    Args:
        workspace: where the rules file is looked for and paths are shown from
            (default: the current directory). Your tools decide where they work.
        rules: the rules file (default: WORKSPACE/.workbench/rules.toml).
        approve: how "ask" rules are answered: "ask" a person (the app), or "all",
            "none", "rules" (headless).
        session: the session file (default: a new one in the sessions directory).

    Raises:
        RuntimeError: the agent is running, or already attached.
    """
    if agent.state.is_streaming:
        raise RuntimeError("attach() needs an idle agent; await agent.wait_for_idle() first")
    if getattr(agent, _ATTACHED, None) is not None:
        raise RuntimeError("this agent is already attached to a workbench")
    root = Path(workspace or Path.cwd()).resolve()
    hide_environment()  # the commands the tools run cannot read this process's secrets
    _name_sources(agent)
    saved = (
        agent.before_tool_call,
        agent.after_tool_call,
        agent.stream_fn,
        agent.should_stop_after_turn,
        agent.on_arguments_failed,
        agent.on_error_result,
    )
    listeners = list(agent.bus._listeners)  # noqa: SLF001 - yours, restored on the way out
    gate = PermissionGate.for_workspace(
        root,
        policy=approve,
        allow=list(allow),
        ask=list(ask),
        deny=list(deny),
        rules_file=Path(rules) if rules else None,
    )
    recorder = None
    if record:  # first on the bus, as `build_runtime` records
        recorder = record_agent(agent, root, gate, path=Path(session) if session else None)
    user_before, _after, user_stream, *_ = saved
    stepper = supervise(agent, gate, step=step, breakpoints=breakpoints, first=user_before)
    lent_publish = False
    if hasattr(user_stream, "on_event") and hasattr(user_stream, "publish"):
        # the workbench's OpenAI-compatible provider: its requests go to the network view
        if user_stream.publish is None:
            user_stream.publish, lent_publish = agent.publish, True
        agent.subscribe(user_stream.on_event)
    turn_limit = limit_turns(agent, max_turns)
    runtime = Runtime(
        agent,
        root,
        None,
        "",
        agent.state.model,
        gate=gate,
        stepper=stepper,
        recorder=recorder,
        turn_limit=turn_limit,
    )
    setattr(agent, _ATTACHED, runtime)
    try:
        yield runtime
    finally:
        (
            agent.before_tool_call,
            agent.after_tool_call,
            agent.stream_fn,
            agent.should_stop_after_turn,
            agent.on_arguments_failed,
            agent.on_error_result,
        ) = saved
        agent.bus._listeners[:] = listeners  # noqa: SLF001 - the recorder, printers, ... go
        if lent_publish and hasattr(user_stream, "publish"):
            user_stream.publish = None
        if recorder is not None:
            recorder.close()
        setattr(agent, _ATTACHED, None)


def run_app(agent: Agent, *, prompt: str = "", **options: Any) -> int:
    """Open the app on `agent` (blocks until it is closed); returns the app's exit code.

    `prompt` is put in the message box. Options: as `attach` (`workspace`, `rules`,
    `step`, `session`, `approve`, ...).
    """
    from workbench.widgets.app import make_app

    with attach(agent, **options) as runtime:
        runtime.prompt = prompt
        return make_app(runtime).run() or 0


async def run_headless(
    agent: Agent,
    prompt: str,
    *,
    approve: ApprovePolicy = "rules",
    console: Any = None,
    **options: Any,
) -> int:
    """Run `prompt` once without the app, printing the event stream.

    Returns the exit code of `workbench --headless`: 0 finished, 1 error, 3 finished but
    the session could not be recorded whole, 4 stopped by `max_turns`, 130 aborted.
    Options: as `attach`.
    """
    if approve == "ask":
        raise ValueError('approve="ask" needs the app; use all, none or rules')
    from workbench.cli.headless import run_headless as run

    with attach(agent, approve=approve, **options) as runtime:
        return await run(runtime, prompt, console)


def load_agent(target: str, base: Path) -> Agent:
    """`my_agent.py:agent` (or `pkg.module:make_agent`): an `Agent`, or a function of
    no arguments returning one. Without `:NAME`, the name `agent` is used.

    Raises:
        ValueError: it does not import, or is not an Agent (or a factory of one).
    """
    from workbench.project.tool_specs import ToolSpecError, import_spec, parse_spec

    spec = parse_spec(target, base, flag="")
    name = spec.attr or "agent"
    module = import_spec(spec, base)
    value = getattr(module, name, None)
    if value is None:
        raise ToolSpecError(f"{target}: {spec.target} defines no {name!r}")
    if not isinstance(value, Agent) and callable(value):
        if any(
            p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            for p in inspect.signature(value).parameters.values()
        ):
            raise ToolSpecError(f"{target}: {name} needs arguments; give a function of none")
        try:
            value = value()
        except Exception as exc:  # noqa: BLE001 - the user's factory failed: say how
            from workbench.project.tool_specs import _user_traceback

            raise ToolSpecError(_user_traceback(spec, exc)) from None
    if not isinstance(value, Agent):
        raise ToolSpecError(
            f"{target}: {name} is a {type(value).__name__}, not a workbench Agent "
            "(or a function returning one)"
        )
    return value


def _name_sources(agent: Agent) -> None:
    """Tools without a `source` get where they are written, for the inspector."""
    from workbench.project.tool_specs import origin_of

    base = Path.cwd().resolve()
    for t in agent.state.tools:
        if t.source is None:
            t.source = origin_of(t, base) or "python"
