"""ReplayApp: step through a recorded session on the live app's own screen.

The screen is the live one (the same Timeline, ToolInspector, StatusBar and
PauseBanner) and the state shown at position N is `fold(events[:N])`, the fold the
live app runs, so replay shows exactly what the live screen showed after event N.

The events stay in the file (`sessions.log.EventLog`) and the fold moves with
`sessions.scrub.ScrubFold`: forward it folds the events in between; back, or far
ahead, it starts from the checkpoint at the last turn start before the target, so a
jump costs at most one turn's events. The earlier turns' objects are the same ones
the timeline drew, so only the current turn is drawn again. Drawing never runs twice
at once: keys pressed while a drawing is laid out end in one more drawing.

Fork (key f) leaves the replay and opens the live app on the transcript up to the
end of the current turn, with the recorded scenario or another model, recording
into a new session file that names its parent (`workbench.session_runs.fork_options`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from widgets import responsive
from widgets.app import WorkbenchApp
from widgets.pause_banner import PauseBanner
from widgets.scrubber import Scrubber
from widgets.status_bar import StatusBar
from widgets.terminal_safety import SafeTextApp
from widgets.timeline import Timeline
from widgets.tool_inspector import ToolInspector
from workbench.sanitize import literal
from workbench.session_runs import ForkChoice, ForkRequest, fork_choices, fork_options, scenario_of
from workbench.sessions.fork import ForkPoint
from workbench.sessions.history import MarkKind, Marks, first_prompt, fork_cut, needs_continue
from workbench.sessions.reader import Session
from workbench.sessions.scrub import ScrubFold
from workbench.view.fold import ViewState, fold


class ForkModal(ModalScreen[ForkChoice | None]):
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


class ReplayApp(SafeTextApp, App[ForkRequest | None]):
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
        Binding("f", "fork", "Fork"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        session: Session,
        *,
        at: int | None = None,
        fork_choices: list[ForkChoice] | None = None,
        scrub: ScrubFold | None = None,
    ) -> None:
        """`scrub`: the session's fold if it was folded while it was read (`open_replay`)."""
        super().__init__()
        self.session = session
        self.events = session.events
        self.marks = Marks(self.events)
        self.fork_choices = fork_choices or []
        if scrub is None:
            scrub = ScrubFold(self.events)
        else:
            scrub.attach(self.events)
        self.scrub = scrub
        self.view_state: ViewState = self.scrub.state
        """The fold of events[:position] (one object, changed in place)."""
        self.position = scrub.position
        self.selected_id: str | None = None
        header = session.header
        self.labels = {t.name: t.label or t.name for t in header.tools}
        self.descriptions = {t.name: t.description for t in header.tools}
        self._start_at = len(self.events) if at is None else max(0, min(at, len(self.events)))
        self._render_busy = False
        self._render_again = False
        self.rendered_position = -1
        """The position the screen shows (it lags `position` while keys are held)."""
        self.sub_title = f"{session.path.name} · {header.model.provider}:{header.model.id}"

    # -- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield PauseBanner(id="pause-banner")
        with Horizontal(id="main"):
            yield Timeline(self.labels, self.view_state, self._now, id="timeline")
            yield ToolInspector(id="inspector")
        yield StatusBar(self.session.header.model.id, id="status")
        yield Scrubber(len(self.events), self.marks.positions["turn"], id="scrubber")
        yield Footer()

    @property
    def timeline(self) -> Timeline:
        return self.screen_stack[0].query_one(Timeline)

    @property
    def inspector(self) -> ToolInspector:
        return self.screen_stack[0].query_one(ToolInspector)

    @property
    def scrubber(self) -> Scrubber:
        return self.screen_stack[0].query_one(Scrubber)

    def on_mount(self) -> None:
        responsive.follow_width(self, self.screen_stack[0])
        self.screen_stack[0].query_one(StatusBar).mode = "replay"
        self.timeline.empty_text = "Nothing yet at this point of the session (→ steps forward)."
        for warning in self.session.warnings:
            self.notify(warning, severity="warning", timeout=6, markup=False)
        self.goto(self._start_at)

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

    def _now(self) -> float:
        """ "Now" on the replayed screen: the time of the event just applied."""
        return self.view_state.last_timestamp

    def _render(self) -> None:
        if self._closing or self._closed:
            return
        state = self.view_state
        now = self._now()
        main = self.screen_stack[0]
        self.timeline.sync(state, now)
        self.timeline.mark_selected(self.selected_id)
        record = state.calls.get(self.selected_id or "")
        self.inspector.show(
            record, self.descriptions.get(record.name, "") if record else "", now,
            batch=state.batch_of(record) if record is not None else None,
        )
        main.query_one(StatusBar).sync(state)
        main.query_one(PauseBanner).show(state.pause, self.labels)
        event = self.events[self.position - 1] if self.position else None
        first = self.events[0].timestamp if self.events else 0.0
        self.scrubber.show(
            self.position, event, state.turn, (event.timestamp - first) if event else 0.0
        )
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

    def on_mount(self) -> None:  # WorkbenchApp.on_mount runs too (Textual calls both)
        parent = Path(self.fork.parent.path).name
        where = self.runtime.session_path.name if self.runtime.session_path else "nowhere"
        self.notify(
            f"Forked {parent} after turn {self.fork.parent.turn}; recording to {where}",
            timeout=6,
            markup=False,
        )
        if needs_continue(self.agent.state.messages):
            self.call_after_refresh(self._continue_fork)

    @work(group="agent", exclusive=False, exit_on_error=False)
    async def _continue_fork(self) -> None:
        self.follow_latest = True
        await self.agent.continue_()
        self._refresh_now()


# -- the command ---------------------------------------------------------------------


def replay_main(argv: list[str]) -> int:
    """`workbench replay FILE [--at N] [fork options]`."""
    from workbench.cli.commands import EXIT_USAGE, ask_for_cwd, load
    from workbench.cli.headless import recording_exit_code, say_recording_problem
    from workbench.cli.replay import replay_parser
    from workbench.providers.settings import settings_from_args
    from workbench.runtime import build_runtime

    args = replay_parser().parse_args(argv)
    scrub = ScrubFold()
    session = load(args.file, "replay", on_batch=scrub.feed)  # read and folded in one pass
    if session is None:
        return EXIT_USAGE
    if args.at is not None and not 0 <= args.at <= len(session.events):
        print(
            f"workbench replay: --at {args.at} is outside 0..{len(session.events)}", file=sys.stderr
        )
        return EXIT_USAGE
    try:
        flag_settings = settings_from_args(args)
    except ValueError as exc:
        print(f"workbench replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
    request = ReplayApp(
        session, at=args.at, fork_choices=fork_choices(session, flag_settings), scrub=scrub
    ).run()
    if not isinstance(request, ForkRequest):
        return 0
    if args.workspace is None and scenario_of(session) is None:
        args.workspace = ask_for_cwd(session, "replay", "fork")
        if args.workspace is None:
            return EXIT_USAGE
    try:
        options = fork_options(
            session, request, workspace=args.workspace, pace=args.pace, session_path=args.session
        )
        runtime = build_runtime(options)
    except (OSError, ValueError) as exc:
        print(f"workbench replay: cannot fork: {literal(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    fork = options.fork
    assert fork is not None
    prefill = "" if fork.events else first_prompt(session.events)
    code = ForkedApp(runtime, fork, prefill=prefill).run() or 0
    recorder = runtime.recorder
    for problem in recorder.problems if recorder else ():
        say_recording_problem(problem)
    if recorder is not None and recorder.error is None and recorder.path.exists():
        print(f"workbench: forked session recorded to {recorder.path}", file=sys.stderr)
    return recording_exit_code(runtime, code)
