"""Rewind (ctrl+z): take the live run back to the end of an earlier turn.

The workspace's files are put back as the session's checkpoints recorded them at that
point (files made since are deleted, as `workbench restore --in-place` does), and the
conversation goes on from there in a new session that is a fork of this one: its
header names this session and the turn, and it starts with a copy of this session's
events up to the cut, so it replays whole and the library marks it as a fork. The
session rewound stays as it was. It is replay's fork (`sessions.fork.fork_point`) and
`restore` (`sessions.checkpoints.restore_at`), run on the live session.

A mixin of `WorkbenchApp`; the key is bound in the app's `BINDINGS`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.sanitize import literal, one_line

if TYPE_CHECKING:
    from workbench.sessions.reader import Session


class RewindModal(ModalScreen[int | None]):
    """Pick the turn to rewind to (Enter), or keep going as it is (Escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    RewindModal { align: center middle; }
    RewindModal > Vertical {
        width: 80%; max-width: 100; height: auto;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    RewindModal OptionList { height: auto; max-height: 12; margin: 1 0; }
    RewindModal .hint { color: $text-muted; }
    """

    def __init__(self, turns: list[tuple[int, str]], workspace: str) -> None:
        super().__init__()
        self.turns = turns
        self.workspace = workspace

    def compose(self) -> ComposeResult:
        title = Text("Rewind: ", style="bold")
        title.append(
            "put the files of the workspace back as they were at the end of the turn you "
            "pick (files made since are deleted) and go on from there in a new session, "
            "a fork of this one (this session stays as it is). Workspace: "
        )
        title.append(literal(self.workspace))
        with Vertical():
            yield Static(title)
            yield OptionList(*(Option(Text(literal(label)), id=str(t)) for t, label in self.turns))
            yield Static("Enter: rewind to it · Escape: keep going as it is", classes="hint")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = len(self.turns) - 1  # the latest turn: the smallest step back
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.turns[event.option_index][0])

    def action_cancel(self) -> None:
        self.dismiss(None)


def turn_labels(session: Session) -> list[tuple[int, str]]:
    """The points a rewind can go back to: the start, then the end of every turn that
    ended, each said in a line (what the turn called, or what it replied)."""
    from workbench.agent.types import text_of
    from workbench.sessions.log import of_kinds

    labels = [(0, "the start: before the first message")]
    prompt = ""
    for event in of_kinds(session.events, ["message_end", "turn_end"]):
        if event.type == "message_end":
            if event.message.role == "user":
                prompt = text_of(event.message.content)
            continue
        message = event.message
        calls = [call.name for call in getattr(message, "tool_calls", [])]
        if calls:
            did = "called " + ", ".join(calls)
        else:
            did = f"replied “{one_line(' '.join(text_of(message.content).split()), 50)}”"
        turn = len(labels)
        asked = f" (asked: {one_line(' '.join(prompt.split()), 40)})" if prompt else ""
        labels.append((turn, f"the end of turn {turn}: {did}{asked}"))
        prompt = ""
    return labels


class RewindActions:
    """`action_rewind`, for `WorkbenchApp`."""

    runtime: Any
    agent: Any
    notify: Any
    push_screen: Any
    switch_to: Any
    follow_latest: bool
    _refresh_now: Any

    def action_rewind(self) -> None:
        """Ask which turn to go back to (see the module)."""
        from workbench.sessions.checkpoints import has_checkpoints
        from workbench.sessions.reader import SessionError, read_session

        if self.agent.state.is_streaming:
            self.notify(
                "A run is going: ctrl+c cancels it, then ctrl+z rewinds.",
                severity="warning",
                timeout=4,
            )
            return
        path = self.runtime.session_path
        if path is None or not path.is_file():
            why = "nothing has run yet" if path is not None else "this run is not recorded"
            self.notify(f"Nothing to rewind: {why}.", severity="warning", timeout=4)
            return
        try:
            session = read_session(path)
        except SessionError as exc:
            self.notify(f"Cannot rewind: {exc}", severity="error", markup=False)
            return
        if not has_checkpoints(session):
            self.notify(
                "Cannot rewind: this session records no checkpoints of the workspace's "
                "files (checkpoints are off), so they cannot be put back.",
                severity="warning",
                timeout=6,
            )
            return
        turns = turn_labels(session)

        def chosen(turn: int | None) -> None:
            if turn is not None:
                self.rewind_to(session, turn)

        self.push_screen(RewindModal(turns, str(self.runtime.workspace)), chosen)

    def rewind_to(self, session: Session, turn: int) -> None:
        """Put the files back as they were at the end of `turn` and go on from there in a
        new session that forks this one."""
        from workbench.runtime import build_runtime
        from workbench.sessions.checkpoints import CheckpointError, restore_at
        from workbench.sessions.fork import fork_point
        from workbench.sessions.history import first_prompt, needs_continue
        from workbench.view.fold import fold

        old = self.runtime
        point = fork_point(session, turn)
        try:
            restored = restore_at(session, point.parent.events, old.workspace, force=True)
        except CheckpointError as exc:
            self.notify(f"Cannot rewind: {exc}", severity="error", markup=False, timeout=10)
            return
        stepper = old.stepper
        breakpoints = [b.text for b in stepper.breakpoints] if stepper else point.breakpoints
        scenario = old.scenario if old.scenario is not None else old.options.scenario
        try:
            runtime = build_runtime(
                replace(
                    old.options,
                    scenario=scenario,
                    workspace=old.workspace,
                    session=None,
                    fork=point,
                    breakpoints=breakpoints,
                )
            )
        except (OSError, ValueError) as exc:
            self.notify(f"Cannot rewind: {exc}", severity="error", markup=False, timeout=10)
            return
        if old.recorder is not None:
            old.recorder.close()
        prefill = "" if point.events else first_prompt(session.events)
        self.switch_to(runtime, prefill=prefill, history=fold(point.events))
        at = f"the end of turn {point.parent.turn}" if point.parent.turn else "the start"
        files = f"restored {restored.written} file(s)"
        if restored.deleted:
            files += f", deleted {len(restored.deleted)} made since"
        lines = [
            f"Rewound to {at}: {files} in {old.workspace}.",
            f"Going on in {runtime.session_path.name if runtime.session_path else 'no file'}, "
            f"a fork of {session.path.name}.",
        ]
        lines += [f"Not written: {path} ({why})" for path, why in sorted(restored.refused.items())]
        self.notify("\n".join(lines), timeout=10, markup=False)
        if needs_continue(self.agent.state.messages):
            self.continue_owed_reply()

    @work(group="agent", exclusive=False, exit_on_error=False)
    async def continue_owed_reply(self) -> None:
        """The transcript ends in tool results: the model owes the next reply."""
        self.follow_latest = True
        await self.agent.continue_()
        self._refresh_now()
