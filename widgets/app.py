"""WorkbenchApp: the controller. It routes; the widgets render.

Events from the agent's bus go into the view fold at once (a few microseconds; an
event is not kept once folded) and a throttled refresh brings the widgets up to date,
paced by `widgets.pacing`: 30 times a second at most, further apart during a burst,
so the screen coalesces the burst rather than slowing the agent. Permission
requests, pauses and the end of a run are shown at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header

from widgets import responsive
from widgets.hand_call import HandCallActions
from widgets.mcp_attachments import McpAttachments
from widgets.new_run import NewRunActions, empty_text
from widgets.pacing import Pacer
from widgets.pause_banner import PauseBanner
from widgets.prompt_bar import PromptBar
from widgets.result_images import ResultImages
from widgets.status_bar import StatusBar, mcp_alert
from widgets.stepping_actions import SteppingActions
from widgets.terminal_safety import SafeTextApp
from widgets.timeline import Timeline
from widgets.tool_inspector import ToolInspector
from workbench import gc_policy
from workbench.agent.clock import now_ms
from workbench.agent.events import AgentEndEvent
from workbench.agent.types import text_of
from workbench.bus_events import (
    McpToolsChangedEvent,
    PermissionRequestEvent,
    RunLimitEvent,
    StepPausedEvent,
)
from workbench.runtime import Runtime
from workbench.view.fold import ViewState
from workbench.view.summary import CostMeter

URGENT = frozenset({PermissionRequestEvent, StepPausedEvent, AgentEndEvent})
"""Events the screen shows at once: the user must act, or the run is over. By class:
the listener sees every event of a run, and a class is cheaper to look up than a
pydantic field."""
FOLD_BATCH = 64
"""Events wait for the fold at most this many at a time: enough for runs of deltas and
updates to fold in one step, few enough that waiting events never make the garbage
collector run more often (measured: 256 at a time already does)."""


@dataclass
class _Widgets:
    """The main screen's widgets, looked up once."""

    timeline: Timeline
    inspector: ToolInspector
    prompt_bar: PromptBar
    status: StatusBar
    pause_banner: PauseBanner


def _text(message: Any) -> str:
    return message.content if isinstance(message.content, str) else text_of(message.content)


class WorkbenchApp(
    NewRunActions,
    SafeTextApp,
    SteppingActions,
    McpAttachments,
    ResultImages,
    HandCallActions,
    App[int],
):
    """The workbench: timeline, inspector, status, prompt, and the dialogs."""

    CSS_PATH = "app.tcss"
    TITLE = "Agent Workbench"
    HORIZONTAL_BREAKPOINTS = responsive.BREAKPOINTS

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "cancel_run", "Cancel run", priority=True),
        Binding("ctrl+c", "quit_hint", show=False, priority=True),
        Binding("f1", "help", "Help"),
        Binding("f6", "toggle_step", "Step mode"),
        Binding("f10", "step", "Step"),
        Binding("f5", "continue_run", "Continue"),
        Binding("ctrl+r", "run_to_end", "Run to end"),
        Binding("f2", "edit_paused", "Edit args"),
        Binding("ctrl+o", "answer_paused", "Answer call"),
        # The same keys where they cannot act: each says why (hidden from the footer).
        Binding("f10", "why('step')", show=False),
        Binding("f5", "why('continue_run')", show=False),
        Binding("ctrl+r", "why('run_to_end')", show=False),
        Binding("f2", "why('edit_paused')", show=False),
        Binding("ctrl+o", "why('answer_paused')", show=False),
        Binding("f8", "cancel_call", "Cancel call"),
        Binding("f9", "toggle_breakpoint", "Breakpoint"),
        Binding("ctrl+b", "breakpoints", "Breakpoints"),
        Binding("f4", "run_details", "Wire & time"),
        Binding("f7", "mcp_servers", "MCP servers", show=False),
        Binding("ctrl+l", "focus_prompt", "Prompt"),
        Binding("ctrl+n", "new_run", "New run"),
    ]

    def __init__(
        self, runtime: Runtime, *, prefill: str | None = None, subtitle: str | None = None
    ) -> None:
        super().__init__()
        self.runtime = runtime
        self.agent = runtime.agent
        self._view_state = ViewState()
        self._unfolded: list[Any] = []
        """Events the bus delivered that the fold has not taken in yet."""
        self.selected_id: str | None = None
        self.follow_latest = True
        """Select the newest started call on every refresh, until the user picks one."""
        self.prefill = runtime.prompt if prefill is None else prefill
        self.labels = {t.name: t.label for t in self.agent.state.tools}
        self.descriptions = {t.name: t.description for t in self.agent.state.tools}
        self.sources = {t.name: t.source for t in self.agent.state.tools if t.source}
        self._mcp_started: asyncio.Event | None = None
        """Set once the MCP servers are up (or failed); prompts wait for it."""
        self._refresh_pending = False
        self.pacer = Pacer()
        """When the screen refreshes (see `widgets.pacing`)."""
        self.refreshes = 0
        """How many times the widgets have been brought up to date."""
        self._footer_state: tuple[Any, bool] = (False, False)
        self._widgets: _Widgets | None = None
        self._permission_open: str | None = None
        self._pause_seen: Any = None
        """The pause the screen last showed (a new one selects its call)."""
        self._unsubscribe: Callable[[], None] | None = None
        self._gc_thresholds: tuple[int, int, int] | None = None
        self._subtitle = subtitle
        self.cost_meter = CostMeter(runtime.prices)
        self.runs: list[Runtime] = []
        """Every runtime this app ran, each with its own session (ctrl+n starts another)."""
        self._show_runtime_title()

    def _show_runtime_title(self) -> None:
        runtime = self.runtime
        self.sub_title = (
            f"{runtime.model.provider}:{runtime.model.id} · {self._subtitle or runtime.workspace}"
        )

    # -- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield PauseBanner(id="pause-banner")
        with Horizontal(id="main"):
            yield from self.side_panel()
            timeline = Timeline(self.labels, self._view_state, now_ms, id="timeline")
            timeline.slow_after_ms = self.runtime.slow_after * 1000.0
            yield timeline
            yield ToolInspector(id="inspector")
        yield StatusBar(self.runtime.model.id, id="status")
        yield PromptBar(id="prompt-bar")
        yield Footer()

    def side_panel(self) -> ComposeResult:
        """Widgets left of the timeline (none; proxy mode lists its conversations here)."""
        yield from ()

    @property
    def timeline(self) -> Timeline:
        return self._main.query_one(Timeline)

    @property
    def inspector(self) -> ToolInspector:
        return self._main.query_one(ToolInspector)

    @property
    def prompt_bar(self) -> PromptBar:
        return self._main.query_one(PromptBar)

    @property
    def _main(self) -> Screen[Any]:
        """The main screen (queries must not hit a dialog on top of it)."""
        return self.screen_stack[0]

    def on_mount(self) -> None:
        main = self._main
        responsive.follow_width(self, main)
        self._widgets = _Widgets(
            main.query_one(Timeline),
            main.query_one(ToolInspector),
            main.query_one(PromptBar),
            main.query_one(StatusBar),
            main.query_one(PauseBanner),
        )
        self._unsubscribe = self.agent.subscribe(self._on_bus_event)
        self._note_run()
        self.prompt_bar.input.value = self.prefill
        self.prompt_bar.input.focus()
        self.timeline.empty_text = empty_text(bool(self.prefill))
        self.set_interval(0.25, self._tick)
        self._refresh_now()
        self.call_after_refresh(self._apply_gc_policy)
        if self.runtime.mcp is not None:
            self._mcp_started = asyncio.Event()
            self._serve_mcp()

    def _recording_problem(self, text: str) -> None:
        """The session file will not hold the whole run: say so (the exit code says it too)."""
        self.notify(f"Session {text}", severity="error", timeout=20)

    def _apply_gc_policy(self) -> None:
        """Once the screen is up, what is alive is here to stay (see `gc_policy`)."""
        if self._gc_thresholds is None:
            self._gc_thresholds = gc_policy.apply()

    def on_unmount(self) -> None:
        self._widgets = None
        if self._gc_thresholds is not None:
            gc_policy.restore(self._gc_thresholds)
            self._gc_thresholds = None
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.runtime.recorder is not None:
            self.runtime.recorder.on_problem = None

    # -- events in ---------------------------------------------------------------------

    def _on_bus_event(self, event: Any, _signal: Any = None) -> None:
        """Runs inside the agent's task: queue for the fold and schedule, nothing else."""
        unfolded = self._unfolded
        unfolded.append(event)
        if len(unfolded) >= FOLD_BATCH:
            self._fold_queued()
        if type(event) in URGENT:
            self.call_later(self._refresh_now)
        elif type(event) is RunLimitEvent:
            self.call_later(self._say_limit, event)
        elif not self._refresh_pending:  # the first event since the last refresh
            now = time.perf_counter()
            self.pacer.arrived(now)
            self._schedule_refresh(now)

    def _say_limit(self, event: RunLimitEvent) -> None:
        self.notify(event.text, title="Run stopped", severity="warning", timeout=15, markup=False)

    def _schedule_refresh(self, now: float | None = None) -> None:
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(self.pacer.delay(now or time.perf_counter()), self._refresh_now)

    @property
    def view_state(self) -> ViewState:
        """The fold of every event so far.

        Events wait in a short queue and fold together when it fills or when anything
        reads the state (a refresh, an action). Together, a run of deltas or updates
        folds in one step (`ViewState.apply_all`): during a burst the fold costs the
        agent about a fifth fewer instructions than folding each event as it comes.
        """
        if self._unfolded:
            self._fold_queued()
        return self._view_state

    def _fold_queued(self) -> None:
        events, self._unfolded = self._unfolded, []
        self._view_state.apply_all(events)

    @property
    def synced_event_count(self) -> int:
        """How many bus events the widgets have been brought up to date with."""
        return self.pacer.synced

    def _tick(self) -> None:
        """Keep elapsed times of running calls ticking while nothing else happens."""
        if self.view_state.pending_calls:
            self._schedule_refresh()

    def _refresh_now(self) -> None:
        """Bring every widget up to date with the fold (and open any dialog it needs)."""
        self._refresh_pending = False
        if self._widgets is None or self._closing or self._closed:
            return
        started = time.perf_counter()
        self.refreshes += 1
        w = self._widgets
        state = self.view_state
        pacer = self.pacer
        waiting = (
            state.pause is not None
            or bool(state.pending_requests)
            or not self.agent.state.is_streaming
        )
        pacer.refreshing(state.event_count, started, waiting=waiting)
        now = now_ms()
        following = self.follow_latest and state.latest_call_id is not None
        pause = state.pause
        paused_call = (
            pause.tool_call_id if pause is not None and pause.tool_call_id in state.calls else None
        )
        if following:  # following shows the call the run is stopped at, else the newest
            self.selected_id = paused_call or state.latest_call_id
        if pause is not self._pause_seen:  # a new pause selects its call, whatever was picked
            self._pause_seen = pause
            if paused_call is not None:
                self.selected_id = paused_call
        w.timeline.selected_id = self.selected_id
        w.timeline.sync(state, now, busy=pacer.burst)
        inspected = False
        if pacer.inspect(started, following=following):
            record = state.calls.get(self.selected_id or "")
            batch = state.batch_of(record) if record is not None else None
            inspected = w.inspector.show(
                record,
                self.descriptions.get(record.name, "") if record else "",
                now,
                source=self.sources.get(record.name, "") if record else "",
                batch=batch,
            )
        steering, follow_ups = self.agent.queued
        w.prompt_bar.show_queue([_text(m) for m in steering], [_text(m) for m in follow_ups])
        w.prompt_bar.running = self.agent.state.is_streaming
        w.status.sync(
            state,
            queued=len(steering) + len(follow_ups),
            costs=self.cost_meter.costs(state),
            extra=mcp_alert(self.runtime.mcp),
        )
        w.pause_banner.show(state.pause, self.labels)
        footer_state = (
            state.pause is not None and state.pause.point,
            self.agent.state.is_streaming,
        )
        if footer_state != self._footer_state and not pacer.burst:
            self._footer_state = footer_state
            self.refresh_bindings()
        self._open_dialogs()
        self.run_worker(self._measure_paint(started, inspected), group="paint")

    async def _measure_paint(self, started: float, inspected: bool) -> None:
        """Note what the refresh cost, up to the screen painting it (`inspected`: it
        showed a call in the inspector).

        The measure also counts agent work that ran meanwhile, which only makes the
        refresh budget more conservative.
        """
        painted = asyncio.Event()
        self.call_after_refresh(painted.set)
        await painted.wait()
        self.pacer.painted(time.perf_counter() - started, inspected=inspected)

    # -- dialogs -----------------------------------------------------------------------

    def _open_dialogs(self) -> None:
        gate = self.runtime.gate
        if gate is None:
            return
        pending = self.view_state.pending_requests
        if self._permission_open is not None and self._permission_open not in pending:
            if isinstance(self.screen, _permission_modal_type()):
                self.screen.dismiss(None)
            self._permission_open = None
        if self._permission_open is None and pending:
            request_id = next(iter(pending))
            self._show_permission(request_id)

    def _show_permission(self, request_id: str) -> None:
        from widgets.permission_modal import PermissionModal

        call_id = self.view_state.pending_requests[request_id]
        record = self.view_state.calls[call_id]
        self.selected_id = call_id
        self._permission_open = request_id
        tool = next((t for t in self.agent.state.tools if t.name == record.name), None)
        batch = [r.id for r in self.view_state.batch_of(record)]
        modal = PermissionModal(
            record,
            tool=tool,
            gate=self.runtime.gate,
            request_id=request_id,
            position=(batch.index(call_id) + 1 if call_id in batch else 1, len(batch)),
            pending=len(self.view_state.pending_requests),
        )

        def closed(_result: object) -> None:
            if self._permission_open == request_id:
                self._permission_open = None
            self._schedule_refresh()

        self.push_screen(modal, closed)

    # -- UI -> agent -------------------------------------------------------------------

    @on(PromptBar.Submitted)
    def _prompt_submitted(self, event: PromptBar.Submitted) -> None:
        message = self.outgoing(event.text)  # with the MCP resources and prompts attached
        if self.agent.state.is_streaming:
            if event.queue_kind == "steer":
                self.agent.steer(message)
            else:
                self.agent.follow_up(message)
            self._refresh_now()
            return
        self._run_prompt(message)

    @work(group="agent", exclusive=False, exit_on_error=False)
    async def _run_prompt(self, text: Any) -> None:
        self.follow_latest = True
        self.timeline.follow = True
        if self._mcp_started is not None and not self._mcp_started.is_set():
            self.notify("Waiting for the MCP servers to start…", timeout=3)
            await self._mcp_started.wait()
        await self.agent.prompt(text)
        self._refresh_now()

    @work(group="mcp", exit_on_error=False)
    async def _serve_mcp(self) -> None:
        """Start the MCP servers and keep them for the app's lifetime; their tools join
        the agent's, and each server's outcome is a notification."""
        hub = self.runtime.mcp
        assert hub is not None and self._mcp_started is not None
        if self.runtime.gate is not None and self.runtime.gate.policy == "ask":
            from widgets.mcp_requests import AppAsker

            hub.asker = AppAsker(self)  # a person answers the servers' requests
        try:
            async with hub.attach(self.agent):
                tools = self.agent.state.tools
                self.labels.update({t.name: t.label for t in tools})
                self.descriptions.update({t.name: t.description for t in tools})
                self.sources.update({t.name: t.source for t in tools if t.source})
                for connection, line in zip(hub.connections, hub.report(), strict=True):
                    failed = connection.status != "ready"
                    self.notify(
                        line,
                        severity="error" if failed else "information",
                        timeout=12 if failed else 4,
                        markup=False,
                    )
                hub.on_change = self._mcp_server_exited
                hub.on_tools_changed = self._mcp_tools_changed
                self._mcp_started.set()
                self._refresh_now()
                await asyncio.Event().wait()  # until the app exits and cancels this worker
        except Exception as exc:  # noqa: BLE001 - the app goes on without MCP tools
            self.notify(f"MCP servers could not be started: {exc}", severity="error", markup=False)
        finally:
            self._mcp_started.set()

    def _mcp_server_exited(self, connection: Any) -> None:
        from workbench.mcp.hub import describe_failure

        self.notify(
            f"{describe_failure(connection)}\nctrl+p, 'Restart MCP server' starts it again.",
            severity="error",
            timeout=15,
            markup=False,
        )
        self._refresh_now()  # the status bar names it

    def _mcp_tools_changed(self, connection: Any, added: list[str], removed: list[str]) -> None:
        tools = [t for t in self.agent.state.tools if t.source == f"mcp:{connection.name}"]
        self.labels.update({t.name: t.label for t in tools})
        self.descriptions.update({t.name: t.description for t in tools})
        self.sources.update({t.name: t.source for t in tools if t.source})
        change = McpToolsChangedEvent(server=connection.name, added=added, removed=removed)
        self.notify(change.text, markup=False)

    def action_mcp_servers(self) -> None:
        from widgets.mcp_servers import McpServersScreen

        hub = self.runtime.mcp
        if hub is None:
            self.notify(
                "No MCP servers in this run (start one with --mcp, --mcp-url or --mcp-config)",
                severity="warning",
                markup=False,
            )
            return
        self.push_screen(McpServersScreen(hub, self.restart_mcp_server, self.open_mcp_catalog))

    @work(group="mcp-restart", exit_on_error=False)
    async def restart_mcp_server(self, name: str) -> None:
        """Start MCP server `name` again; its tools replace the old ones."""
        hub = self.runtime.mcp
        assert hub is not None
        try:
            connection = await hub.restart(name)
        except (KeyError, RuntimeError) as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return
        if connection.status != "ready":
            self.notify(
                hub.report()[hub.connections.index(connection)],
                severity="error",
                timeout=12,
                markup=False,
            )
            return
        tools = [t for t in hub.tools if t.source == f"mcp:{name}"]
        self.labels.update({t.name: t.label for t in tools})
        self.descriptions.update({t.name: t.description for t in tools})
        self.sources.update({t.name: t.source for t in tools if t.source})
        self.notify(f"MCP server {name} restarted: {len(tools)} tools", markup=False)
        self._refresh_now()

    @on(Timeline.Selected)
    def _card_selected(self, event: Timeline.Selected) -> None:
        self.follow_latest = False
        self.selected_id = event.tool_call_id
        self._refresh_now()

    def select_call(self, tool_call_id: str) -> None:
        """Show `tool_call_id` in the inspector and mark its card (stops following)."""
        self.follow_latest = False
        self.selected_id = tool_call_id
        self._refresh_now()
        self.call_after_refresh(self.timeline.show_call, tool_call_id)

    def action_cancel_run(self) -> None:
        if not self.agent.state.is_streaming:
            self.action_quit_hint()
            return
        self.agent.abort("Cancelled by the user (ctrl+c)")
        self.notify("Run cancelled: the abort signal fired.", severity="warning", timeout=3)

    def action_cancel_call(self) -> None:
        call_id = self.selected_id
        if call_id is None or not self.agent.abort_tool_call(call_id, "Cancelled by the user (F8)"):
            self.notify("The selected call is not in flight.", severity="warning", timeout=2)
            return
        self.notify(
            f"Cancelled {call_id} only; the rest of the batch goes on.", timeout=3, markup=False
        )

    def action_focus_prompt(self) -> None:
        self.prompt_bar.input.focus()

    def action_run_details(self, turn: int | None = None) -> None:
        from widgets.run_details import RunDetailsScreen

        self.push_screen(
            RunDetailsScreen(self.view_state, turn=turn, now=now_ms(), prices=self.runtime.prices)
        )

    def action_help(self) -> None:
        from widgets.help_screen import HelpScreen

        self.push_screen(HelpScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show each key in the footer only while it can do something (False hides it)."""
        pause = self.view_state.pause
        if action in ("step", "continue_run", "run_to_end"):
            return pause is not None
        if action in ("edit_paused", "answer_paused"):
            return pause is not None and self.pause_refusal(action, pause) is None
        if action in ("cancel_run", "cancel_call"):
            return self.agent.state.is_streaming
        if action == "quit_hint":
            return not self.agent.state.is_streaming
        return True

    # -- command palette ---------------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]):  # type: ignore[no-untyped-def]
        yield from super().get_system_commands(screen)
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            if binding.description:
                yield SystemCommand(
                    f"{binding.description} ({binding.key})",
                    _command_help(binding.action),
                    lambda action=binding.action: self.run_action(action),
                )
        hub = self.runtime.mcp
        for connection in hub.connections if hub is not None else ():
            if connection.status in ("failed", "exited"):
                yield SystemCommand(
                    f"Restart MCP server {connection.name}",
                    f"It {connection.status}: start it again and list its tools anew",
                    lambda name=connection.name: self.restart_mcp_server(name),
                )
        yield SystemCommand(
            "Call a tool by hand…",
            "Pick any tool, fill its arguments, run it as a model's call (the model never sees it)",
            self.action_call_by_hand,
        )
        linked = self.linked_resources(self.inspector.record)
        if linked is not None:
            yield SystemCommand(
                "MCP resources in the selected call's result",
                "Read the resources its result links to or embeds, and attach them",
                lambda: self.open_mcp_catalog(*linked),
            )
        yield from self.image_commands()
        if screen is self._main:
            yield SystemCommand(
                "Thinking (t in the timeline)",
                "Open every thinking block in the timeline, or close them all",
                self.timeline.action_toggle_thinking,
            )


def _command_help(action: str) -> str:
    return {
        "cancel_run": "Fire the run's abort signal (works in dialogs too)",
        "help": "Keys and what the screen shows",
        "toggle_step": "Pause before every model request and tool execution",
        "step": "At a pause: go to the next pause point",
        "continue_run": "At a pause: leave step mode and run to the next breakpoint",
        "run_to_end": "At a pause: ignore every pause until this run ends",
        "toggle_breakpoint": "Break on the selected call's tool",
        "breakpoints": "Add or remove breakpoints of every kind",
        "edit_paused": "At a pause before a tool or at failed arguments: edit the arguments (re-validated)",
        "answer_paused": "At a pause before a tool: answer it yourself; at @error: replace the result",
        "cancel_call": "Cancel only the selected running call",
        "focus_prompt": "Put the cursor in the message box",
        "run_details": "Every model request as sent, and where the run's time went",
        "mcp_servers": "Each MCP server's state, tools, log and stderr; restart one",
        "new_run": "Start again: a new session, a fresh scratch workspace, the scenario's prompt",
    }.get(action, action)


def _permission_modal_type() -> type:
    from widgets.permission_modal import PermissionModal

    return PermissionModal


def make_app(
    runtime: Runtime, *, prefill: str | None = None, subtitle: str | None = None
) -> WorkbenchApp:
    """The one factory the CLI, the tests and the screenshot script share."""
    return WorkbenchApp(runtime, prefill=prefill, subtitle=subtitle)
