"""Starting over without quitting: a new run (ctrl+n), and what ctrl+c says when idle;
`switch_to` also serves a rewind (`workbench.widgets.rewind`).

A mixin of `WorkbenchApp` (it swaps the app's runtime, view state and bus listener);
the keys are bound in the app's `BINDINGS`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any


def empty_text(prefilled: bool) -> str:
    """What the empty timeline says (whether a first message waits in the box)."""
    text = "Nothing yet. Type a message below and press Enter"
    return text + (" (a first message is already there)." if prefilled else ".")


class NewRunActions:
    """`action_new_run` and `action_quit_hint`, for `WorkbenchApp`."""

    runtime: Any
    agent: Any
    notify: Any
    workers: Any
    runs: list[Any]
    _recording_problem: Any
    _mcp_started: asyncio.Event | None

    @property
    def session_paths(self) -> list[Path]:
        """Every session file this app recorded to, oldest first."""
        return [r.session_path for r in self.runs if r.session_path is not None]

    def action_quit_hint(self) -> None:
        """ctrl+c while nothing runs: people expect it to quit, so say what does."""
        self.notify("Nothing is running to cancel. ctrl+q quits.", severity="warning", timeout=3)

    def action_new_run(self: Any) -> None:
        """Start over: a fresh runtime (new session file, new scratch workspace unless
        one was given), an empty screen, and the scenario's prompt in the message box."""
        if self.agent.state.is_streaming:
            self.notify(
                "A run is going: ctrl+c cancels it, then ctrl+n starts a new one.",
                severity="warning",
                timeout=4,
            )
            return
        try:
            runtime = self.runtime.fresh()
        except (OSError, ValueError) as exc:
            self.notify(f"Could not start a new run: {exc}", severity="error", markup=False)
            return
        self.switch_to(runtime)
        where = f", recording to {runtime.session_path}" if runtime.session_path else ""
        self.notify(f"New run in {runtime.workspace}{where}.", timeout=5, markup=False)

    def switch_to(
        self: Any, runtime: Any, *, prefill: str | None = None, history: Any = None
    ) -> None:
        """Run `runtime` from now on (ctrl+n, a rewind): the old run's listener and MCP
        servers stop; the screen starts from `history` (a fold of the events the new
        session starts with) or empty, with `prefill` (default: the scenario's prompt)
        in the message box."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        hub, built = self.runtime.mcp, runtime.mcp
        keep = hub is not None and hub.attached and built is not None
        if keep:
            runtime.mcp = hub  # the running servers serve the new run (see `_move_mcp`)
        elif hub is not None:
            self.workers.cancel_group(self, "mcp")  # its servers stop with the old run
        self._use(runtime)
        if history is not None:
            self._view_state = history
        self._listen()
        text = self.prefill if prefill is None else prefill
        self.prompt_bar.input.value = text
        self.timeline.empty_text = empty_text(bool(text))
        self.main.reset(self._view_state, self.labels)
        self._refresh_now()
        self.prompt_bar.input.focus()
        if runtime.mcp is not None:
            self._mcp_started = asyncio.Event()
            if keep:
                self._move_mcp(built)
            else:
                self._serve_mcp()
        self._note_run()

    def _note_run(self: Any) -> None:
        """Keep the runtime (its session is said at exit) and hear its recorder's problems."""
        self.runs.append(self.runtime)
        recorder = self.runtime.recorder
        if recorder is not None:
            recorder.on_problem = self._recording_problem
            for problem in recorder.problems:
                self._recording_problem(problem)
