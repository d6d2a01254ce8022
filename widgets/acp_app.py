"""AcpApp: the workbench on an ACP agent (`workbench acp -- AGENT ...`).

The usual screen (timeline, inspector, permission dialogs, stepping, the network
view) on the run's own bus: an ACP run is the workbench's loop following the agent
(`workbench.acp`). What differs: the agent is started once the screen is up, each
message typed goes to the agent as `session/prompt` (one at a time: a message typed
while the agent works waits for the prompt's end, as ACP has no steering), F3
switches the agent's mode, and nothing can be called by hand (the tools are the
agent's).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual import on, work
from textual.binding import Binding, BindingType

from workbench.widgets.app import WorkbenchApp
from workbench.widgets.prompt_bar import PromptBar


class AcpApp(WorkbenchApp):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("f3", "next_mode", "Mode")]

    def __init__(self, run: Any) -> None:
        self.acp = run
        """The ACP run (the agent, its connection, its session)."""
        super().__init__(
            run.runtime,
            prefill="",
            subtitle=f"ACP agent {run.label} · {run.options.workspace}",
        )
        self.failure: str | None = None
        """Why the agent could not be started (the app then exits with 2)."""

    def main_ready(self) -> None:
        super().main_ready()
        self.timeline.empty_text = f"Starting the ACP agent {self.acp.label}…"
        self.prompt_bar.queue_kind = "follow_up"  # ACP has no steering
        self._serve_agent()

    @work(group="acp", exit_on_error=False)
    async def _serve_agent(self) -> None:
        from workbench.acp import AcpError

        try:
            async with self.acp.connected():
                self.timeline.empty_text = (
                    f"{self.acp.label} is ready: type a message below (it is sent as "
                    "session/prompt)"
                )
                self.timeline.refresh()
                self._refresh_now()
                await asyncio.Event().wait()  # until the app exits and cancels this worker
        except AcpError as exc:
            self.failure = str(exc)
            self.exit(self.START_FAILED)

    @on(PromptBar.Submitted)
    def _prompt_submitted(self, event: PromptBar.Submitted) -> None:
        event.stop()
        message = self.outgoing(event.text)
        if self.agent.state.is_streaming:  # ACP has no steering: it waits for the turn's end
            self.agent.follow_up(message)
            self.prompt_bar.queue_kind = "follow_up"
            self.notify("Queued: sent when the agent ends this prompt (ACP has no steering).")
            self._refresh_now()
            return
        self._run_prompt(message)

    def action_next_mode(self) -> None:
        modes = self.acp.modes
        if not modes:
            self.notify("This agent offers no modes.", severity="warning", timeout=3)
            return
        ids = [str(m.get("id")) for m in modes]
        current = ids.index(self.acp.mode) if self.acp.mode in ids else -1
        self._set_mode(ids[(current + 1) % len(ids)])

    @work(group="acp-mode", exit_on_error=False)
    async def _set_mode(self, mode_id: str) -> None:
        try:
            await self.acp.set_mode(mode_id)
        except Exception as exc:  # noqa: BLE001 - the agent's refusal, shown
            self.notify(f"The agent did not switch mode: {exc}", severity="error", markup=False)
            return
        self.notify(f"Mode: {mode_id}", timeout=2, markup=False)

    def action_call_by_hand(self) -> None:
        self.notify(
            "The tools of an ACP agent run inside it: there is nothing here to call them with.",
            severity="warning",
            timeout=4,
        )

    def action_new_run(self) -> None:
        self.notify(
            "An ACP session goes on with each message; quit and start `workbench acp` again "
            "for a new one.",
            severity="warning",
            timeout=4,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("new_run", "call_by_hand"):
            return False  # hidden from the footer (the keys say why)
        return super().check_action(action, parameters)

    def _refresh_now(self) -> None:
        if len(self.agent.state.tools) != len(self.descriptions):  # the agent named more tools
            self.learn_tools(self.agent.state.tools)
        super()._refresh_now()
