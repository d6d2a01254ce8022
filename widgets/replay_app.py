"""ReplayApp: step through a recorded session on the live app's own screen.

The screen is the live one (the same Timeline, ToolInspector, StatusBar and
PauseBanner) and the state shown at position N is `fold(events[:N])`, the fold the
live app runs, so replay shows exactly what the live screen showed after event N.

The events stay in the file (`sessions.log.EventLog`) and the fold moves with
`sessions.scrub.ScrubFold`: forward it folds the events in between; back, or far
ahead, it starts from the checkpoint at the last turn start before the target, so a
jump costs at most one turn's events. The timeline knows its items by index and
`rev`, so it draws again only what differs from what it showed. Drawing never runs
twice at once: keys pressed while a drawing is laid out end in one more drawing.

Fork (key f) leaves the replay and opens the live app on the transcript up to the
end of the current turn, with the recorded scenario or another model, recording
into a new session file that names its parent (`workbench.session_runs.fork_options`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench import gc_policy
from workbench.sanitize import literal
from workbench.sessions.fork import ForkPoint
from workbench.sessions.history import MarkKind, Marks, fork_cut, needs_continue
from workbench.sessions.reader import Session
from workbench.sessions.scrub import ScrubFold
from workbench.view.fold import ViewState, fold
from workbench.widgets import responsive
from workbench.widgets.app import WorkbenchApp
from workbench.widgets.main_screen import MainScreen
from workbench.widgets.scrubber import Scrubber
from workbench.widgets.starting_screen import SlowStart, StartingScreen
from workbench.widgets.terminal_safety import SafeTextApp
from workbench.widgets.textual_compat import is_closing
from workbench.widgets.timeline import Timeline
from workbench.widgets.tool_inspector import ToolInspector

if TYPE_CHECKING:  # what a fork needs is loaded when the user forks (it is the runtime)
    from workbench.session_runs import ForkChoice, ForkRequest  # noqa: F401 - in strings

ForkChoices = list["ForkChoice"] | Callable[[], list["ForkChoice"]]
"""The models a fork can use, or how to list them (asked the first time they are needed)."""


class ForkModal(ModalScreen["ForkChoice | None"]):
    """Pick the model a fork continues with (Enter), or go back to the replay (Escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back to replay")]
    DEFAULT_CSS = """
    ForkModal { align: center middle; }
    ForkModal > Vertical {
        width: 80%; max-width: 90; height: auto;
        border: thick $accent; background: $surface; padding: 1 2;
    }
    ForkModal OptionList { height: auto; max-height: 8; margin: 1 0; }
    ForkModal .hint { color: $text-muted; }
    """

    def __init__(self, title: Text, choices: list[ForkChoice]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text)
            yield OptionList(*(Option(Text(literal(c.label))) for c in self.choices))
            yield Static("Enter: fork with this model · Escape: back to the replay", classes="hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReplayApp(SlowStart, SafeTextApp, App["ForkRequest | None"]):
    """A recorded session, one event at a time. Returns a ForkRequest if the user forks."""

    CSS_PATH = "app.tcss"
    TITLE = "Agent Workbench · replay"
    HORIZONTAL_BREAKPOINTS = responsive.BREAKPOINTS

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "Event", key_display="←→", priority=True),
        Binding("left", "step(-1)", "Previous event", show=False, priority=True),
        Binding("right_square_bracket", "jump('turn', 1)", "Turn", key_display="[]", priority=True),
        Binding(
            "left_square_bracket", "jump('turn', -1)", "Previous turn", show=False, priority=True
        ),
        Binding("full_stop", "jump('call', 1)", "Call", key_display=",.", priority=True),
        Binding("comma", "jump('call', -1)", "Previous call", show=False, priority=True),
        Binding("d", "jump('decision', 1)", "Decision", key_display="dD", priority=True),
        Binding(
            "D,shift+d", "jump('decision', -1)", "Previous decision", show=False, priority=True
        ),
        Binding("e", "jump('error', 1)", "Error", key_display="eE", priority=True),
        Binding("E,shift+e", "jump('error', -1)", "Previous error", show=False, priority=True),
        Binding("home", "goto(0)", "Start", show=False, priority=True),
        Binding("end", "goto_end", "End", show=False, priority=True),
        Binding("f4", "network_view", "Network view"),
        Binding("f", "fork", "Fork"),
        Binding("w,f7", "mcp_wire", "MCP wire", key_display="w"),
        Binding("q", "quit", "Quit"),
    ]

    main: MainScreen
    """The main screen (made once the session is read)."""

    def __init__(
        self,
        session: Session | None = None,
        *,
        read: Callable[[Callable[[int], None]], tuple[Session, ForkChoices]] | None = None,
        at: int | None = None,
        fork_choices: ForkChoices | None = None,
        scrub: ScrubFold | None = None,
    ) -> None:
        """Replay `session`, or the one `read` reads once the first frame is up (it
        reports how many events it has read so far, and returns the session with the
        models a fork can use, or how to list them when the user forks; the starting
        screen says how far it has come). If `read`
        raises SessionError, or `at` is outside the session, the app exits with 2 and
        `start_error` says why. `scrub`: the session's fold if it is folded while it
        is read."""
        super().__init__()
        if (session is None) == (read is None):
            raise TypeError("ReplayApp takes a session or a way to read one (`read`)")
        self._read_session = read
        self._at = at
        self.selected_id: str | None = None
        self._render_busy = False
        self._render_again = False
        self.rendered_position = -1
        """The position the screen shows (it lags `position` while keys are held)."""
        self._gc_thresholds: tuple[int, int, int] | None = None
        self._scrub = scrub
        self.session: Session | None = None
        if session is not None:
            self._use(session, fork_choices or [])

    def _use(self, session: Session, fork_choices: ForkChoices) -> None:
        """Replay `session` (folded into `scrub` as it was read, or folded here)."""
        self.session = session
        self.events = session.events
        self.marks = Marks(self.events)
        self._fork_choices = fork_choices
        if self._scrub is None:
            self.scrub = ScrubFold(self.events)
        else:
            self.scrub = self._scrub
            self.scrub.attach(self.events)
        header = session.header
        self.labels = {t.name: t.label or t.name for t in header.tools}
        self.descriptions = {t.name: t.description for t in header.tools}
        at = self._at
        self._start_at = len(self.events) if at is None else max(0, min(at, len(self.events)))
        # The first frame shows where the replay starts (not event 0, then a jump).
        self.scrub.goto(self._start_at)
        self.position = self.scrub.position
        self.sub_title = f"{session.path.name} · {header.model.provider}:{header.model.id}"

    @property
    def fork_choices(self) -> list[ForkChoice]:
        """The models a fork can use (listed the first time they are asked for)."""
        if callable(self._fork_choices):
            self._fork_choices = self._fork_choices()
        return self._fork_choices

    # -- layout ------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        if self.session is None:
            return StartingScreen("Reading the session…")
        return self._main_screen(self.session)

    def _main_screen(self, session: Session) -> MainScreen:
        scrubber = Scrubber(len(self.events), self.marks.positions["turn"], id="scrubber")
        scrubber.show(*self._scrubber_at())  # drawn at the start from the first frame
        self.main = MainScreen(
            self.view_state,
            labels=self.labels,
            clock=self._now,
            model=session.header.model.id,
            bottom=scrubber,
            mode="replay",
            ready=self.main_ready,
        )
        return self.main

    @property
    def view_state(self) -> ViewState:
        """The fold of events[:position] (a new object after a move back)."""
        return self.scrub.state

    @property
    def timeline(self) -> Timeline:
        return self.main.timeline

    @property
    def inspector(self) -> ToolInspector:
        return self.main.inspector

    @property
    def scrubber(self) -> Scrubber:
        bottom = self.main.bottom
        assert isinstance(bottom, Scrubber)
        return bottom

    async def on_mount(self) -> None:
        if self.session is None:
            self.call_after_refresh(self._read)  # once the first frame is up
            return
        await self.main.mounted.wait()  # the main screen's start-up (`main_ready`) first

    @work(group="read")
    async def _read(self) -> None:
        """Read the session in a thread (the starting screen counts the events read and
        keeps answering ctrl+q), then show it."""
        from workbench.sessions.reader import SessionError

        assert self._read_session is not None
        starting = self.screen
        assert isinstance(starting, StartingScreen)
        said = 0.0

        def progress(events: int) -> None:
            nonlocal said
            if time.monotonic() - said > 0.1:
                said = time.monotonic()
                self.call_from_thread(starting.say, f"Reading the session… {events:,} events")

        read = await self.made_in_thread(self._read_session, progress, errors=(SessionError,))
        if read is None:
            return
        session, choices = read
        if self._at is not None and not 0 <= self._at <= len(session.events):
            self.cannot_start(f"--at {self._at} is outside 0..{len(session.events)}")
            return
        self._use(session, choices)
        await self.push_screen(self._main_screen(session))  # over the starting screen

    def main_ready(self) -> None:
        """The main screen's widgets are mounted: show where the replay starts."""
        self.timeline.empty_text = "Nothing yet at this point of the session (→ steps forward)."
        for warning in self.session.warnings if self.session is not None else ():
            self.notify(warning, severity="warning", timeout=6, markup=False)
        self.goto(self._start_at)
        self.call_after_refresh(self._apply_gc_policy)

    def _apply_gc_policy(self) -> None:
        """The session's fold is here to stay, as the live app's objects are (see
        `gc_policy`): without it, full collections walk the whole fold during jumps."""
        if self._gc_thresholds is None:
            self._gc_thresholds = gc_policy.apply()

    def on_unmount(self) -> None:
        if self._gc_thresholds is not None:
            gc_policy.restore(self._gc_thresholds)
            self._gc_thresholds = None

    # -- moving ------------------------------------------------------------------------

    def goto(self, position: int) -> None:
        """Show the state after events[:position] (clamped to the session)."""
        position = max(0, min(position, len(self.events)))
        self.scrub.goto(position)
        self.position = position
        event = self.events[position - 1] if position else None
        call_id = getattr(event, "tool_call_id", None)
        if call_id is not None and call_id in self.view_state.calls:
            self.selected_id = call_id
        elif self.selected_id not in self.view_state.calls:
            self.selected_id = self.view_state.latest_call_id
        self._request_render()

    def _request_render(self) -> None:
        """Draw now, or, while a drawing is still being laid out, once more after it.

        Drawing a long session's timeline can take a while; keys pressed meanwhile
        (a held arrow) move the position and end up in one drawing, not one each.
        """
        if self._render_busy:
            self._render_again = True
            return
        self._render_busy = True
        self.call_after_refresh(self._render)

    def action_network_view(self) -> None:
        """The network view and timings, as of the replayed position (as F4 in a run)."""
        from workbench.widgets.network_view import NetworkViewScreen

        if self.session is not None:
            self.push_screen(NetworkViewScreen(self.view_state, now=self._now()))

    def _now(self) -> float:
        """ "Now" on the replayed screen: the time of the event just applied."""
        return self.view_state.last_timestamp

    def _scrubber_at(self) -> tuple[int, Any, int, float]:
        """What the scrubber says at the current position: the event, turn and time."""
        event = self.events[self.position - 1] if self.position else None
        first = self.events[0].timestamp if self.events else 0.0
        elapsed = (event.timestamp - first) if event else 0.0
        return self.position, event, self.view_state.turn, elapsed

    def _render(self) -> None:
        if is_closing(self):
            return
        state = self.view_state
        self.main.show(
            state, self._now(), selected=self.selected_id, descriptions=self.descriptions
        )
        record = state.calls.get(self.selected_id or "")
        self.scrubber.show(*self._scrubber_at())
        if record is not None:
            self.call_after_refresh(self.timeline.show_call, record.id)
        self.rendered_position = self.position
        self.call_after_refresh(self._rendered)

    def _rendered(self) -> None:
        """The screen has laid out and painted the drawing: draw again if keys moved on."""
        self._render_busy = False
        if self._render_again:
            self._render_again = False
            self._request_render()

    @property
    def settled(self) -> bool:
        """The screen shows the current position and no drawing is under way."""
        return not self._render_busy and self.rendered_position == self.position

    def action_step(self, delta: int) -> None:
        self.goto(self.position + delta)

    def action_goto(self, position: int) -> None:
        self.goto(position)

    def action_goto_end(self) -> None:
        self.goto(len(self.events))

    def action_jump(self, kind: MarkKind, direction: int) -> None:
        target = (
            self.marks.next(kind, self.position)
            if direction > 0
            else self.marks.previous(kind, self.position)
        )
        if target is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"No {kind} {where} event {self.position}.", timeout=2)
            return
        self.goto(target)

    @on(Timeline.Selected)
    def _card_selected(self, event: Timeline.Selected) -> None:
        self.select_call(event.tool_call_id)

    def select_call(self, tool_call_id: str) -> None:
        """Show a call in the inspector (until the next event about another call)."""
        self.selected_id = tool_call_id
        self._render()

    # -- fork --------------------------------------------------------------------------

    def action_mcp_wire(self) -> None:
        """The JSON-RPC messages with MCP servers the session recorded, up to here."""
        from workbench.widgets.mcp_wire import McpWireScreen, recorded_rows

        if not any(e.type == "mcp_wire" for e in self.events):
            self.notify("This session recorded no MCP messages.", timeout=3)
            return
        self.push_screen(McpWireScreen(lambda: recorded_rows(self.events[: self.position])))

    def action_fork(self) -> None:
        if not self.fork_choices:
            self.notify(
                "No model to fork with: the session has no scenario; pass --base-url/--model "
                "(or --profile) to `workbench replay`.",
                severity="warning",
                markup=False,
            )
            return
        cut, turn = fork_cut(self.events, self.marks.turn_at(self.position))
        title = Text("Fork: ", style="bold")
        title.append(
            f"continue live after turn {turn} (events 1–{cut} copied into a new session that "
            "names this one as its parent), with:"
            if turn
            else "start again from the first prompt, in a new session that names this one, with:"
        )

        def chosen(choice: ForkChoice | None) -> None:
            from workbench.session_runs import ForkRequest

            if choice is not None:
                self.exit(ForkRequest(turn, choice))

        self.push_screen(ForkModal(title, self.fork_choices), chosen)


class ForkedApp(WorkbenchApp):
    """The live app, started from a recorded session's history (a fork).

    Its view starts as the fold of the copied events, so the screen continues from
    what the replay showed; when the transcript ends in tool results the model owes
    the next reply, and the run continues at once.
    """

    def __init__(self, runtime: Any, fork: ForkPoint, *, prefill: str | None = None) -> None:
        super().__init__(runtime, prefill=prefill)
        self.fork = fork
        self._view_state = fold(fork.events)

    def main_ready(self) -> None:
        super().main_ready()
        parent = Path(self.fork.parent.path).name
        path = self._started().session_path
        where = path.name if path else "nowhere"
        lines = [f"Forked {parent} after turn {self.fork.parent.turn}; recording to {where}"]
        self.notify("\n".join(lines + self.fork.notes), timeout=10, markup=False)
        if needs_continue(self.agent.state.messages):
            self.call_after_refresh(self.continue_owed_reply)
