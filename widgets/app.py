"""WorkbenchApp: the live app. It routes; the main screen renders.

Events from the agent's bus go into the view fold at once (a few microseconds; an
event is not kept once folded) and a throttled refresh brings the screen up to date
(`MainScreen.show`), paced by `workbench.widgets.pacing`: 30 times a second at most, further
apart during a burst, so the screen coalesces the burst rather than slowing the
agent. Permission requests, pauses and the end of a run are shown at once.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

from workbench import gc_policy
from workbench.sanitize import literal
from workbench.widgets import responsive
from workbench.widgets.app_commands import AppCommands
from workbench.widgets.hand_call import HandCallActions
from workbench.widgets.mcp_attachments import McpAttachments
from workbench.widgets.mcp_lifecycle import McpLifecycle
from workbench.widgets.new_run import NewRunActions, empty_text
from workbench.widgets.pacing import Pacer
from workbench.widgets.permission_dialogs import PermissionDialogs
from workbench.widgets.prompt_bar import PromptBar
from workbench.widgets.result_images import ResultImages
from workbench.widgets.rewind import RewindActions
from workbench.widgets.screen_stats import ScreenStats
from workbench.widgets.starting_screen import SlowStart, StartingScreen
from workbench.widgets.stepping_actions import SteppingActions
from workbench.widgets.terminal_safety import SafeTextApp
from workbench.widgets.textual_compat import is_closing

if TYPE_CHECKING:
    from workbench.bus_events import RunLimitEvent
    from workbench.runtime import Runtime
    from workbench.view.fold import ViewState
    from workbench.widgets.main_screen import MainScreen
    from workbench.widgets.timeline import Timeline
    from workbench.widgets.tool_inspector import ToolInspector


@functools.cache
def event_kinds() -> dict[type, str]:
    """How the screen treats some of the bus's events, by class (the listener sees every
    event of a run, and a class is cheaper to look up than a pydantic field): "urgent"
    ones are shown at once (the user must act, or the run is over); "limit" says a
    limit stopped the run."""
    from workbench.agent.events import AgentEndEvent
    from workbench.bus_events import PermissionRequestEvent, RunLimitEvent, StepPausedEvent

    urgent = (PermissionRequestEvent, StepPausedEvent, AgentEndEvent)
    return {**dict.fromkeys(urgent, "urgent"), RunLimitEvent: "limit"}


FOLD_BATCH = 64
"""Events wait for the fold at most this many at a time: enough for runs of deltas and
updates to fold in one step, few enough that waiting events stay young for the
garbage collector (see benchmarks/README.md)."""

TICKS_UNDER_A_DIALOG = 4
"""Elapsed times tick four times a second, and once a second under a dialog."""


def _text(message: Any) -> str:
    from workbench.agent.types import text_of

    return message.content if isinstance(message.content, str) else text_of(message.content)


class WorkbenchApp(
    AppCommands,
    PermissionDialogs,
    NewRunActions,
    RewindActions,
    SafeTextApp,
    SteppingActions,
    McpAttachments,
    McpLifecycle,
    ResultImages,
    HandCallActions,
    SlowStart,
    App[int],
):
    """The workbench: timeline, inspector, status, prompt, and the dialogs."""

    CSS_PATH = "app.tcss"
    TITLE = "Agent Workbench"
    START_FAILED = 2  # the app's result is its exit code
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
        Binding("f4", "network_view", "Network view"),
        Binding("f7", "mcp_servers", "MCP servers", show=False),
        Binding("ctrl+l", "focus_prompt", "Prompt"),
        Binding("ctrl+n", "new_run", "New run"),
        Binding("ctrl+z", "rewind", "Rewind", show=False),
        Binding("ctrl+s", "sessions", "Sessions", show=False),
    ]

    main: MainScreen
    """The main screen (made when the app starts; dialogs go on top of it)."""

    def __init__(
        self,
        runtime: Runtime | None = None,
        *,
        start: Callable[[], Runtime] | None = None,
        prefill: str | None = None,
        subtitle: str | None = None,
        stats: ScreenStats | None = None,
    ) -> None:
        """Run `runtime`, or the one `start` builds once the first frame is up (the
        starting screen shows meanwhile; if `start` raises OSError or ValueError the app
        exits with 2 and `start_error` says why: `SlowStart`). `stats`: filled in with
        what the screen did (benchmarks and tests)."""
        super().__init__()
        if (runtime is None) == (start is None):
            raise TypeError("WorkbenchApp takes a runtime or a way to start one (`start`)")
        self._start = start
        self.stats = stats
        self._prefill = prefill
        self._mcp_started: asyncio.Event | None = None
        """Set once the MCP servers are up (or failed); prompts wait for it."""
        self._refresh_pending = False
        self._ticks = 0
        self._shown = False
        """The main screen is mounted and refreshes reach it."""
        self.pacer = Pacer()
        """When the screen refreshes (see `workbench.widgets.pacing`)."""
        self._footer_state: tuple[Any, bool] = (False, False)
        self._pause_seen: Any = None
        """The pause the screen last showed (a new one selects its call)."""
        self._unsubscribe: Callable[[], None] | None = None
        self._gc_thresholds: tuple[int, int, int] | None = None
        self._subtitle = subtitle
        self.runs: list[Runtime] = []
        """Every runtime this app ran, each with its own session (ctrl+n starts another)."""
        self.runtime: Runtime | None = None
        if runtime is not None:
            self._use(runtime)

    def _use(self, runtime: Runtime) -> None:
        """Run `runtime` from now on, on an empty screen (at start, and for ctrl+n)."""
        from workbench.view.fold import ViewState
        from workbench.view.summary import CostMeter

        self.runtime, self.agent = runtime, runtime.agent
        self.prefill = runtime.prompt if self._prefill is None else self._prefill
        self._prefill = None  # a new run starts with its own scenario's prompt
        self.cost_meter = CostMeter(runtime.prices)
        self._view_state: ViewState = ViewState()
        self._unfolded: list[Any] = []
        """Events the bus delivered that the fold has not taken in yet."""
        self.selected_id: str | None = None
        self.follow_latest = True
        """Select the newest started call on every refresh, until the user picks one."""
        self._permission_open: str | None = None
        self.labels, self.descriptions, self.sources = {}, {}, {}  # typed in McpLifecycle
        self.learn_tools(self.agent.state.tools)
        self._event_kinds = event_kinds()
        self._show_runtime_title()

    def _started(self) -> Runtime:
        """The runtime in use: set before the main screen, its keys and timers exist."""
        if self.runtime is None:
            raise RuntimeError("the runtime has not started yet")
        return self.runtime

    def _show_runtime_title(self) -> None:
        runtime = self._started()
        self.sub_title = (
            f"{runtime.model.provider}:{runtime.model.id} · {self._subtitle or runtime.workspace}"
        )

    # -- layout ------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        return StartingScreen() if self.runtime is None else self._main_screen()

    def _main_screen(self) -> MainScreen:
        from workbench.agent.clock import now_ms
        from workbench.widgets.main_screen import MainScreen

        self.main = MainScreen(
            self._view_state,
            labels=self.labels,
            clock=now_ms,
            model=self._started().model.id,
            bottom=PromptBar(id="prompt-bar"),
            side=self.side_panel(),
            ready=self.main_ready,
        )
        self.main.timeline.slow_after_ms = self._started().slow_after * 1000.0
        return self.main

    def side_panel(self) -> ComposeResult:
        """Widgets left of the timeline (none; proxy mode lists its conversations here)."""
        yield from ()

    @property
    def timeline(self) -> Timeline:
        return self.main.timeline

    @property
    def inspector(self) -> ToolInspector:
        return self.main.inspector

    @property
    def prompt_bar(self) -> PromptBar:
        bottom = self.main.bottom
        assert isinstance(bottom, PromptBar)
        return bottom

    async def on_mount(self) -> None:
        if self.runtime is None:
            self.call_after_refresh(self._start_runtime)  # once the first frame is up
            return
        await self.main.mounted.wait()  # the main screen's start-up (`main_ready`) first

    @work(group="start")
    async def _start_runtime(self) -> None:
        """Build the runtime (its imports are most of the start-up), then show it."""
        assert self._start is not None
        runtime = await self.made_in_thread(self._start, errors=(OSError, ValueError))
        if runtime is None:
            return
        self._use(runtime)
        starting = self.screen
        # Over the starting screen: the base of Textual's stack cannot be switched out.
        await self.push_screen(self._main_screen())
        await self.main.mounted.wait()
        if isinstance(starting, StartingScreen) and starting.typed:
            self.prompt_bar.input.insert_text_at_cursor("".join(starting.typed))

    def main_ready(self) -> None:
        """The main screen's widgets are mounted: start listening and showing."""
        self._shown = True
        self._listen()
        self._note_run()
        self.prompt_bar.input.value = self.prefill
        self.prompt_bar.input.focus()
        self.timeline.empty_text = empty_text(bool(self.prefill))
        if self.stats is not None:
            self.main.screen_layout_refresh_signal.subscribe(self, self._laid_out)
        self.set_interval(0.25, self._tick)
        if self._started().not_offered:
            self.notify(
                "\n".join(literal(line) for line in self._started().not_offered),
                title="Not offered to the model",
                severity="warning",
                timeout=30,
                markup=False,
            )
        self._refresh_now()
        self.call_after_refresh(self._apply_gc_policy)
        if self._started().mcp is not None:
            self._mcp_started = asyncio.Event()
            self._serve_mcp()

    def _listen(self) -> None:
        """Subscribe to the agent's bus (timed when `stats` is given)."""
        listener = self._on_bus_event
        self._unsubscribe = self.agent.subscribe(
            listener if self.stats is None else self.stats.timed(listener)
        )

    def _laid_out(self, _screen: object) -> None:
        assert self.stats is not None
        self.stats.layouts += 1

    def _recording_problem(self, text: str) -> None:
        """The session file will not hold the whole run: say so (the exit code says it too)."""
        self.notify(f"Session {text}", severity="error", timeout=20)

    def _apply_gc_policy(self) -> None:
        """Once the screen is up, what is alive is here to stay (see `gc_policy`)."""
        if self._gc_thresholds is None:
            self._gc_thresholds = gc_policy.apply()

    def on_unmount(self) -> None:
        self._shown = False
        if self._gc_thresholds is not None:
            gc_policy.restore(self._gc_thresholds)
            self._gc_thresholds = None
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.runtime is not None and self.runtime.recorder is not None:
            self.runtime.recorder.on_problem = None

    # -- events in ---------------------------------------------------------------------

    def _on_bus_event(self, event: Any, _signal: Any = None) -> None:
        """Runs inside the agent's task: queue for the fold and schedule, nothing else."""
        unfolded = self._unfolded
        unfolded.append(event)
        if len(unfolded) >= FOLD_BATCH:
            self._fold_queued()
        kind = self._event_kinds.get(type(event))
        if kind == "urgent":
            self.call_later(self._refresh_now)
        elif kind == "limit":
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
        folds in one step (`ViewState.apply_all`), for fewer instructions than folding
        each event as it comes.
        """
        if self._unfolded:
            self._fold_queued()
        return self._view_state

    def _fold_queued(self) -> None:
        events, self._unfolded = self._unfolded, []
        self._view_state.apply_all(events)

    def _tick(self) -> None:
        """Keep elapsed times of running calls ticking while nothing else happens.

        Under a dialog only every fourth tick: any change to the screen below a modal
        recomposes the whole modal screen (its dimmed background included), and at the
        full rate those redraws took the loop from the keys typed into the dialog."""
        self._ticks += 1
        if isinstance(self.screen, ModalScreen) and self._ticks % TICKS_UNDER_A_DIALOG:
            return
        if self.view_state.pending_calls:
            self._schedule_refresh()

    def _refresh_now(self) -> None:
        """Bring the screen up to date with the fold (and open any dialog it needs)."""
        self._refresh_pending = False
        if not self._shown or is_closing(self):
            return
        from workbench.agent.clock import now_ms
        from workbench.widgets.status_bar import mcp_alert

        started = time.perf_counter()
        state = self.view_state
        pacer = self.pacer
        streaming = self.agent.state.is_streaming
        waiting = state.pause is not None or bool(state.pending_requests) or not streaming
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
        steering, follow_ups = self.agent.queued
        inspected = self.main.show(
            state,
            now,
            selected=self.selected_id,
            descriptions=self.descriptions,
            sources=self.sources,
            inspect=pacer.inspect(started, following=following),
            busy=pacer.burst,
            queued=len(steering) + len(follow_ups),
            costs=self.cost_meter.costs(state),
            extra=mcp_alert(self._started().mcp),
        )
        prompt_bar = self.prompt_bar
        prompt_bar.show_queue([_text(m) for m in steering], [_text(m) for m in follow_ups])
        prompt_bar.running = streaming
        footer_state = (pause is not None and pause.point, streaming)
        if footer_state != self._footer_state:
            self._footer_state = footer_state
            self.refresh_bindings()
        self._open_dialogs()
        self.call_after_refresh(self._painted, started, inspected)
        if self.stats is not None:
            self.stats.refreshes += 1
            self.stats.refresh_seconds += time.perf_counter() - started
            self.stats.synced = state.event_count

    def _painted(self, started: float, inspected: bool) -> None:
        """The screen painted the refresh that began at `started`: what it cost paces
        the next ones (`inspected`: it showed a call in the inspector). Agent work that
        ran meanwhile counts too, which only makes the pacing more careful."""
        cost = time.perf_counter() - started
        self.pacer.painted(cost, inspected=inspected)
        if self.stats is not None:
            self.stats.painted += 1
            self.stats.paint_seconds += cost

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

    def on_timeline_selected(self, event: Timeline.Selected) -> None:
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

    def action_network_view(self, turn: int | None = None) -> None:
        from workbench.agent.clock import now_ms
        from workbench.widgets.network_view import NetworkViewScreen

        self.push_screen(
            NetworkViewScreen(
                self.view_state, turn=turn, now=now_ms(), prices=self._started().prices
            )
        )

    def action_help(self) -> None:
        from workbench.widgets.help_screen import HelpScreen

        self.push_screen(HelpScreen())

    def action_sessions(self) -> None:
        """The session library over the main screen (Escape comes back)."""
        from workbench.sessions.header import default_session_dir
        from workbench.widgets.sessions_app import SessionsScreen

        path = self._started().session_path  # the library of where this app records
        self.push_screen(SessionsScreen(path.parent if path else default_session_dir()))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show each key in the footer only while it can do something (False hides it)."""
        if self.runtime is None:  # starting: nothing to act on yet
            return action == "quit"
        pause = self.view_state.pause
        if action in ("step", "continue_run", "run_to_end"):
            return pause is not None
        if action in ("edit_paused", "answer_paused"):
            return pause is not None and self.pause_refusal(action, pause) is None
        if action in ("cancel_run", "cancel_call"):
            return self.agent.state.is_streaming
        if action == "quit_hint":
            return not self.agent.state.is_streaming
        if action == "sessions":
            return self.screen is self.main
        return True


def make_app(
    runtime: Runtime | None = None,
    *,
    start: Callable[[], Runtime] | None = None,
    prefill: str | None = None,
    subtitle: str | None = None,
    stats: ScreenStats | None = None,
) -> WorkbenchApp:
    """The one factory the CLI, the tests, the benchmarks and the screenshot script
    share: the app on `runtime`, or on the one `start` builds after the first frame."""
    return WorkbenchApp(runtime, start=start, prefill=prefill, subtitle=subtitle, stats=stats)
