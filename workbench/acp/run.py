"""An ACP agent run: the agent's process, its connection, and the workbench's own loop
on it (so the timeline, the inspector, the gate, the stepper and the recorder see an
ACP run as they see any other).

`AcpRun(options)` builds the agent, the gate, the stepper and the recorder at once;
`async with run.connected():` starts the agent's process (in a process tree of its
own, ended as a whole), `initialize`s it with the client's capabilities, and opens a
session (`session/new` with the workspace as `cwd`, or `session/load`). Then
`run.agent.prompt(text)` sends `session/prompt` and the loop follows the updates.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from workbench.acp.calls import AcpCall
from workbench.acp.client import AcpClient
from workbench.acp.opening import AcpError, agent_label, open_session
from workbench.acp.permission import AcpHook, PermissionAsk, execute
from workbench.acp.stream import AcpStream, FeedItem, next_or_abort
from workbench.acp.terminals import Terminals
from workbench.agent import Agent, AgentTool, Model
from workbench.bus_events import (
    AcpCallUpdateEvent,
    AcpNoticeEvent,
    AcpNoticeKind,
    ProviderRequestEvent,
    ProviderResponseEvent,
)
from workbench.oversight import Oversight
from workbench.permissions import PermissionGate, chain_before
from workbench.proctree import ProcessTree
from workbench.runtime import Runtime
from workbench.secret_env import environment
from workbench.stepper import Stepper

log = logging.getLogger(__name__)
ANY_OBJECT: dict[str, Any] = {"type": "object"}
START_TIMEOUT = 120.0
"""Seconds for the agent to answer `initialize` and `session/new` (npx may download)."""
TREE_GRACE = 2.0
STDERR_LINES = 40


@dataclass(kw_only=True)
class AcpOptions(Oversight):
    command: list[str]
    """The agent's program and its arguments."""
    workspace: Path
    env: dict[str, str] = field(default_factory=dict)
    """Set for the agent's process, over the workbench's own environment."""
    mcp_servers: list[Any] = field(default_factory=list)
    """`workbench.mcp.McpServerConfig`s passed to the agent in `session/new`."""
    mode: str | None = None
    """A mode to switch to once the session is open (`session/set_mode`)."""
    auth: str | None = None
    """The `authenticate` method to use when the agent asks (default: the first whose
    environment variables are set)."""
    load_session: str | None = None
    """Resume the agent's session of this id (`session/load`) instead of a new one."""
    pass_env: list[str] = field(default_factory=list)
    """Variables a terminal's command gets beyond `run_command`'s allow-list."""
    record: bool = True
    session: Path | None = None
    """The session file (default: a new one in the user's data directory)."""
    proxy: bool = False
    """Put a workbench proxy in front of the agent's model (`workbench.acp.model_proxy`):
    its requests are shown and recorded with the run."""
    proxy_upstream: str | None = None
    """The model's base URL behind the proxy (default: from the agent's environment)."""


class AcpRun:
    def __init__(self, options: AcpOptions) -> None:
        self.options = options
        self.label = agent_label(options.command)
        model = Model(id=self.label, provider="acp")
        self.calls: dict[str, AcpCall] = {}
        self.agent = Agent(stream_fn=AcpStream(self), model=model)
        recorder = None
        if options.record:
            from workbench.sessions.recorder import start_recording

            recorder = start_recording(
                self.agent, workspace=options.workspace, path=options.session
            )
        gate = PermissionGate.for_workspace(
            options.workspace,
            publish=self.agent.publish,
            policy=options.approve,
            allow=options.allow,
            ask=options.ask,
            deny=options.deny,
            rules_file=options.rules_file,
        )
        stepper = Stepper(
            publish=self.agent.publish, enabled=options.step, breakpoints=options.breakpoints
        )
        stepper.attach(self.agent)
        self.agent.before_tool_call = AcpHook(self, chain_before(gate, stepper.before_tool_call))
        self.runtime = Runtime(
            self.agent, options.workspace, None, "", model, gate=gate, stepper=stepper,
            recorder=recorder,
        )  # fmt: skip
        self.terminals = Terminals(self)
        self.tools: dict[str, AgentTool] = {}
        self.conn: Any = None
        self.session_id: str | None = None
        self.agent_info: dict[str, Any] = {}
        self.modes: list[dict[str, Any]] = []
        self.mode: str | None = None
        self.commands: list[dict[str, Any]] = []
        self.takes_images = False
        self.can_load = False
        self.stderr: list[str] = []
        self.ready = anyio.Event()
        self.turn_over = False
        """The current prompt has ended (calls still waiting on the agent stop waiting)."""
        self.prompting = False
        self.asks: list[PermissionAsk] = []
        self.cancelled = False
        """`session/cancel` was sent for the current prompt."""
        self.pass_env: list[str] = list(options.pass_env)
        self.proxy_url: str | None = None
        """The proxy in front of the agent's model, while it runs (`options.proxy`)."""
        self._backlog: dict[str, list[AcpCallUpdateEvent]] = {}
        self._prompts = 0
        self._send, self._receive = anyio.create_memory_object_stream[FeedItem](math.inf)
        self._tasks: set[asyncio.Future[Any]] = set()
        self._live = False
        self._prompt_done = anyio.Event()
        self._prompt_done.set()

    # -- the connection ------------------------------------------------------------

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[AcpRun]:
        """Start the agent and open its session; stop it (and all it started) on exit.

        Raises:
            AcpError: the agent did not start, or answered `initialize` or the session
                with an error (its last lines of stderr are in the message).
        """
        async with AsyncExitStack() as stack:
            env = {**environment(), **self.options.env}
            if self.options.proxy:
                from workbench.acp.model_proxy import model_proxy

                env = await stack.enter_async_context(model_proxy(self, env))
            async with self._started(env):
                yield self

    @asynccontextmanager
    async def _started(self, agent_env: dict[str, str]) -> AsyncIterator[AcpRun]:
        from acp.client.connection import ClientSideConnection

        tree = ProcessTree("acp")
        env = tree.env(agent_env)
        try:
            process = await asyncio.create_subprocess_exec(
                *self.options.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=str(self.options.workspace),
                start_new_session=True,
                limit=64 * 1024 * 1024,  # one JSON-RPC message per line, a file's text in it
            )
        except OSError as exc:
            raise AcpError(
                f"cannot start {self.options.command[0]}: {exc.strerror or exc}"
            ) from exc
        tree.adopt(process.pid)
        assert process.stdin is not None and process.stdout is not None
        client = AcpClient(self)
        self.conn = ClientSideConnection(
            # acp routes only the methods a client has (the others answer "method not
            # found"); its Client protocol lists elicitation, which this client does not offer
            client,  # type: ignore[arg-type]
            process.stdin,
            process.stdout,
            observers=[client.observe],
        )
        self._live = True
        self.spawn(self._read_stderr(process))
        try:
            try:
                with anyio.fail_after(START_TIMEOUT):
                    await open_session(self)
            except Exception as exc:  # noqa: BLE001 - any failure to start is the agent's
                raise AcpError(self._why(exc)) from None
            self.ready.set()
            yield self
        finally:
            with anyio.CancelScope(shield=True):
                await self.cancel()
                self._live = False
                for task in list(self._tasks):
                    task.cancel()
                try:  # whatever fails here, the agent's process tree still ends below
                    await self.terminals.release_all()
                except Exception:  # noqa: BLE001
                    log.exception("releasing the ACP agent's terminals failed")
                try:
                    await self.conn.close()
                except Exception:  # noqa: BLE001, S110 - the agent may be gone already
                    pass
                if process.stdin is not None:
                    process.stdin.close()
                await tree.end(TREE_GRACE)
                with anyio.move_on_after(TREE_GRACE):
                    # to the end of its pipes too: a transport left open outlives the loop
                    await process.communicate()

    def spawn(self, coro: Any) -> None:
        """Run `coro` alongside (ended with the connection)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _why(self, exc: BaseException) -> str:
        what = "did not open a session in time" if isinstance(exc, TimeoutError) else str(exc)
        tail = "\n".join(self.stderr[-8:])
        return f"the ACP agent {self.label} {what}" + (f"\nits stderr:\n{tail}" if tail else "")

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            self.stderr.append(line.decode("utf-8", "replace").rstrip())
            del self.stderr[:-STDERR_LINES]

    # -- prompts ---------------------------------------------------------------------

    async def start_prompt(self, blocks: list[dict[str, Any]]) -> str | None:
        """Send `session/prompt` (after the previous one ended); its end comes through
        the feed. Returns why it could not be sent (None: sent)."""
        await self.ready.wait()
        await self._prompt_done.wait()
        self._drain()
        if not self._live:
            return "the agent is not running"
        if not blocks:
            return "nothing to send: the prompt is empty"
        self.prompting, self.turn_over, self.cancelled = True, False, False
        self._prompt_done = anyio.Event()
        signal = self.agent.signal
        if signal is not None:
            signal.add_listener(lambda _reason: self.spawn(self.cancel()))
        self._prompts += 1
        request_id = f"acp-prompt-{self._prompts}"
        await self.agent.publish(  # the network view's line for this prompt
            ProviderRequestEvent(
                request_id=request_id,
                provider="acp",
                model=self.label,
                url=None,
                body={
                    "method": "session/prompt",
                    "params": {"sessionId": self.session_id, "prompt": blocks},
                },
            )
        )
        self.spawn(self._prompt(blocks, request_id))
        return None

    async def _prompt(self, blocks: list[dict[str, Any]], request_id: str) -> None:
        from acp.schema import ImageContentBlock, TextContentBlock

        prompt = [
            ImageContentBlock.model_validate(b) if b["type"] == "image" else TextContentBlock(**b)
            for b in blocks
        ]
        item = FeedItem("end")
        started = time.monotonic()
        try:
            response = await self.conn.prompt(session_id=self.session_id, prompt=prompt)
            item.stop_reason = response.stop_reason
        except Exception as exc:  # noqa: BLE001 - the agent's error ends the prompt
            item.error = str(exc) or type(exc).__name__
        finally:
            with anyio.CancelScope(shield=True):
                await self.agent.publish(
                    ProviderResponseEvent(
                        request_id=request_id,
                        total_ms=round((time.monotonic() - started) * 1000.0, 3),
                        error=item.error,
                        finish_reason=item.stop_reason,
                        aborted=item.stop_reason == "cancelled",
                    )
                )
            self.turn_over, self.prompting = True, False
            for call in self.calls.values():
                call.touch()
            for ask in self.asks:
                ask.cancel()
            self.asks.clear()
            self._send.send_nowait(item)
            self._prompt_done.set()

    def _drain(self) -> None:
        """Drop what is left of a prompt whose turn the loop ended without reading it
        (an aborted run asks the model nothing more): its end would end the next turn."""
        while True:
            try:
                self._receive.receive_nowait()
            except anyio.WouldBlock:
                return

    async def next_item(self, signal: Any) -> FeedItem | None:
        return await next_or_abort(self._receive.receive, signal)

    def feed(self, item: FeedItem) -> None:
        self._send.send_nowait(item)

    async def cancel(self) -> None:
        """`session/cancel` (once per prompt), and every pending permission request is
        answered as cancelled, as the protocol asks."""
        for ask in self.asks:
            ask.cancel()
        if not self.prompting or self.cancelled or self.session_id is None:
            return
        self.cancelled = True
        try:
            await self.conn.cancel(session_id=self.session_id)
        except Exception:  # noqa: BLE001, S110 - the agent may be gone; the prompt ends anyway
            pass

    async def set_mode(self, mode_id: str) -> None:
        """`session/set_mode`, and a notice of it."""
        await self.conn.set_session_mode(session_id=self.session_id, mode_id=mode_id)
        self.mode = mode_id
        await self.notice("mode", f"mode set to {mode_id}", {"modeId": mode_id})

    # -- calls -------------------------------------------------------------------------

    def tool_for(self, name: str, kind: str | None = None) -> AgentTool:
        """The foreign tool the loop runs for calls named `name` (made on first use)."""
        tool = self.tools.get(name)
        if tool is None:

            async def run_call(call_id: str, _params: Any, signal: Any, on_update: Any) -> Any:
                return await execute(self, call_id, signal, on_update)

            tool = AgentTool(
                name=name,
                label=kind or name,
                description=f"a tool of the ACP agent {self.label} (it runs in the agent)",
                parameters=ANY_OBJECT,
                execute=run_call,
                source="acp",
            )
            self.tools[name] = tool
            self.agent.state.tools.append(tool)
        return tool

    def report(self, fields: dict[str, Any], *, new: bool) -> AcpCall:
        """A `tool_call` (`new`) or `tool_call_update`, or a permission request's call."""
        call_id = str(fields.get("toolCallId"))
        call = self.calls.get(call_id)
        if new and call is not None and call.finished:
            call = None  # an id used again for a new call
        fresh = call is None
        if call is None:
            call = self.calls[call_id] = AcpCall(call_id)
        lines = call.apply(fields)
        if fresh:
            self.tool_for(call.name, call.kind)
            if not call.raw_input_reported:
                lines.append(("agent: raw input", "not reported"))
            self.feed(FeedItem("call", call=call))
        self._note_soon(call, lines, fields)
        self.settle_if_known(call)
        return call

    def covering_call(self) -> AcpCall | None:
        """The call a client request (a file, a terminal) belongs to: the latest
        unfinished one the agent was allowed to run, else the latest unfinished one."""
        running = [c for c in self.calls.values() if not c.finished]
        allowed = [c for c in running if c.allowed]
        latest = allowed or running
        return latest[-1] if latest else None

    def settle_if_known(self, call: AcpCall) -> None:
        if call.settled:
            return
        # an empty raw input is what some agents announce before the model's arguments
        if call.arguments or call.asked is not None or call.status != "pending":
            call.settled = True
            self.feed(FeedItem("settled", call=call))

    def _note_soon(self, call: AcpCall, lines: list[tuple[str, str]], data: dict[str, Any]) -> None:
        """The lines go on the bus once the loop has the call (until then they wait)."""
        for label, detail in lines:
            event = AcpCallUpdateEvent(
                tool_call_id=call.id, tool_name=call.name, label=label, detail=detail, data=data
            )
            data = {}  # the fields go with the first line only
            self._backlog.setdefault(call.id, []).append(event)
        if call.in_stream and lines:
            self._flush_soon(call)

    def _flush_soon(self, call: AcpCall) -> None:
        if self._live:
            self.spawn(self._flush(call))

    async def _flush(self, call: AcpCall) -> None:
        for event in self._backlog.pop(call.id, []):
            await self.agent.publish(event)

    async def opened(self, call: AcpCall) -> None:
        """The stream opened the call: its history so far goes on the bus."""
        call.in_stream = True
        await self._flush(call)

    async def note(self, call: AcpCall, label: str, detail: str = "") -> None:
        await self.agent.publish(
            AcpCallUpdateEvent(
                tool_call_id=call.id, tool_name=call.name, label=label, detail=detail
            )
        )

    async def notice(self, kind: AcpNoticeKind, text: str, data: dict[str, Any]) -> None:
        await self.agent.publish(AcpNoticeEvent(kind=kind, text=text, data=data))

    def render(self, call: AcpCall) -> str:
        from workbench.acp.calls import content_text

        return content_text(call.content, self.terminals.output_of, self.shown_path)

    def shown_path(self, path: str) -> str:
        """A path the agent names, relative to the workspace when it lies inside."""
        root = self.options.workspace
        try:
            return Path(path).relative_to(root).as_posix() if os.path.isabs(path) else path
        except ValueError:
            return path
