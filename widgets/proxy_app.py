"""ProxyApp: the workbench in proxy mode: the conversations side by side, one shown.

The conversations are listed on the left; the one selected fills the usual screen
(timeline, inspector, dialogs, stepping, the network view), exactly as a native run
does, because each conversation is a native agent on its own bus. Every
conversation's events are kept in order for the fold; the shown one folds as they
come, the others when they are shown. A permission request or a pause in another
conversation brings it to the screen, unless the shown one is waiting on a person.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.agent import Agent, AssistantMessageEvent, LlmContext, Model, StreamOptions
from workbench.bus_events import PermissionRequestEvent, StepPausedEvent
from workbench.runtime import Runtime
from workbench.sanitize import literal
from workbench.view.fold import ViewState
from workbench.widgets.app import WorkbenchApp
from workbench.widgets.pacing import Pacer
from workbench.widgets.prompt_bar import PromptBar

ATTENTION = frozenset({PermissionRequestEvent, StepPausedEvent})
STREAMING_RATE = 100.0
"""Events a second above which a conversation's stream is a burst for the screen."""


class ConversationList(OptionList):
    DEFAULT_CSS = """
    ConversationList { width: 30; height: 1fr; border: none; border-right: vkey $panel-lighten-2; }
    """


def _no_model(
    model: Model, context: LlmContext, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    raise RuntimeError("proxy mode: the agent sends the requests")


class ProxyApp(WorkbenchApp):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f3", "next_conversation", "Next conversation"),
    ]

    def __init__(self, proxy: Any, command: list[str] | None = None) -> None:
        self.proxy = proxy
        self.command = command or []
        """A client to start once the proxy listens (`-- COMMAND ARGS...`); the app ends with it."""
        model = Model(id="proxy", provider="proxy", base_url=proxy.upstream)
        idle = Runtime(Agent(stream_fn=_no_model, model=model), proxy.workspace, None, "", model)
        super().__init__(idle, prefill="", subtitle=f"proxy to {proxy.upstream}")
        # The agent waits on every chunk the proxy copies, and a refresh holds the loop
        # that copies them: a reply streaming faster than this many events a second is
        # a burst, painted twice a second at most (`workbench.widgets.pacing`).
        self.pacer = Pacer(burst_rate=STREAMING_RATE)
        self.current: Any = None
        """The conversation on screen (None until the first request)."""
        self._views: dict[int, ViewState] = {}
        self._queues: dict[int, list[Any]] = {}
        self._listing: tuple[Any, ...] = ()
        proxy.on_conversation.append(self._conversation_started)
        proxy.on_unjudged.append(self._unjudged)

    def side_panel(self) -> ComposeResult:
        yield ConversationList(id="conversations")

    def main_ready(self) -> None:
        super().main_ready()
        self.prompt_bar.display = False  # the agent sends the messages
        self.prompt_bar.input.disabled = True
        self.timeline.empty_text = f"Waiting for an agent's first request ({self.proxy.upstream})"
        self._serve_proxy()

    @work(group="proxy", exit_on_error=False)
    async def _serve_proxy(self) -> None:
        try:
            async with self.proxy.running():
                self.sub_title = (
                    f"listening on {self.proxy.url} · forwarding to {self.proxy.upstream}"
                )
                self.timeline.empty_text = f"{self.proxy.url}: waiting for an agent's first request"
                self.timeline.refresh()
                if self.command:
                    await self._run_client()
                    return
                await asyncio.Event().wait()  # until the app exits and cancels this worker
        except OSError as exc:
            self.notify(f"The proxy cannot listen: {exc}", severity="error", markup=False)

    async def _run_client(self) -> None:
        """The client runs with its output in a log next to the sessions (the app has the
        terminal); the app ends when it does, with its exit status."""
        from workbench.proxy.launcher import client_environment, run_client
        from workbench.sessions.header import default_session_dir

        folder = self.proxy.options.session_dir or default_session_dir()
        folder.mkdir(parents=True, exist_ok=True)
        log = str(folder / "proxy-client.log")
        env = client_environment(
            os.environ,
            self.proxy.url,
            token=self.proxy.options.token,
            has_upstream_key=self.proxy.options.api_key is not None,
        )
        name = " ".join(self.command)
        self.sub_title = f"{name} · through {self.proxy.url} · output in {log}"
        self.notify(f"Started {name} (its output: {log})", timeout=4, markup=False)
        try:
            code = await run_client(self.command, env, quiet=True, log=log)
        except OSError as exc:
            self.notify(f"Cannot start {self.command[0]}: {exc}", severity="error", markup=False)
            return
        self.exit(code)

    # -- conversations ---------------------------------------------------------------

    def _conversation_started(self, conv: Any) -> None:
        self._queues[conv.number] = []
        conv.agent.subscribe(lambda event, _signal=None: self._on_conversation_event(conv, event))
        if self.current is None:
            self.show_conversation(conv)
        self._schedule_refresh()

    def _on_conversation_event(self, conv: Any, event: Any) -> None:
        if conv is self.current:
            self._on_bus_event(event)
            return
        self._queues[conv.number].append(event)
        if type(event) in ATTENTION and not self._waiting_on_person():
            self.call_later(self.show_conversation, conv)
        self._schedule_refresh()

    def _unjudged(self, entry: dict[str, Any]) -> None:
        self.notify(
            f"Forwarded UNJUDGED (--pass-through): {entry['method']} {entry['path']}",
            severity="warning",
            timeout=4,
            markup=False,
        )

    def _waiting_on_person(self) -> bool:
        state = self.view_state
        return self.current is not None and (
            state.pause is not None or bool(state.pending_requests)
        )

    def show_conversation(self, conv: Any) -> None:
        """Put `conv` on the screen (its events so far folded in)."""
        if conv is self.current:
            return
        if self.current is not None:
            self._views[self.current.number] = self.view_state
        self.current = conv
        self.runtime = conv.runtime
        self.agent = conv.agent
        self._view_state = self._views.pop(conv.number, ViewState())
        self._unfolded = self._queues.get(conv.number, [])
        self._queues[conv.number] = []
        self.selected_id = None
        self.follow_latest = True
        self.main.status.model = conv.agent.state.model.id
        self.main.reset(self._view_state)  # another conversation's items
        self._refresh_now()

    def action_next_conversation(self) -> None:
        conversations = self.proxy.conversations
        if not conversations:
            self.notify("No conversation yet.", severity="warning", timeout=2)
            return
        index = conversations.index(self.current) if self.current in conversations else -1
        self.show_conversation(conversations[(index + 1) % len(conversations)])

    @on(OptionList.OptionSelected, "#conversations")
    def _conversation_selected(self, event: OptionList.OptionSelected) -> None:
        self.show_conversation(self.proxy.conversations[event.option_index])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("focus_prompt", "new_run"):  # the agent starts its own runs
            return False
        return super().check_action(action, parameters)

    @on(PromptBar.Submitted)
    def _prompt_submitted(self, event: PromptBar.Submitted) -> None:
        self.notify("In proxy mode the agent sends the messages.", severity="warning", timeout=3)

    def action_call_by_hand(self) -> None:
        self.notify(
            "In proxy mode the tools run inside your agent: there is nothing here "
            "to call them with.",
            severity="warning",
            timeout=4,
        )

    # -- refresh -----------------------------------------------------------------------

    def _refresh_now(self) -> None:
        tools = self.agent.state.tools
        if len(tools) != len(self.descriptions):  # the agent declared more tools
            self.learn_tools(tools)
        super()._refresh_now()
        if self._shown:
            self._sync_list()

    def _sync_list(self) -> None:
        rows = tuple(_row(conv, conv is self.current) for conv in self.proxy.conversations)
        if rows == self._listing:
            return
        self._listing = rows
        listing = self.main.query_one(ConversationList)
        listing.clear_options()
        listing.add_options([Option(_label(*row)) for row in rows])
        if self.current in self.proxy.conversations:
            listing.highlighted = self.proxy.conversations.index(self.current)


def _row(conv: Any, shown: bool) -> tuple[Any, ...]:
    """What the list says of a conversation, read from its live objects."""
    runtime = conv.runtime
    if conv.ended:
        status = "ended: client went away"
    elif runtime.gate is not None and runtime.gate.pending:
        status = "awaiting approval"
    elif runtime.stepper is not None and runtime.stepper.paused is not None:
        status = "paused"
    elif conv.busy:
        status = "model answering"
    elif conv.unanswered:
        status = "agent running tools"
    elif not conv.tools:
        status = "side request (no tools)"
    else:
        status = "idle"
    return (
        conv.number,
        conv.agent.state.model.id,
        status,
        conv.calls_seen,
        len(conv.never_answered),
        shown,
    )


def _label(number: int, model: str, status: str, calls: int, missing: int, shown: bool) -> Text:
    text = Text()
    text.append(f"{'▶' if shown else ' '} {number} ", style="bold")
    text.append(literal(model))
    text.append(f"\n  {status}", style="bold magenta" if status == "awaiting approval" else "dim")
    text.append(f"\n  {calls} tool call{'s' if calls != 1 else ''}", style="dim")
    if missing:
        text.append(f"\n  {missing} never answered", style="bold red")
    return text
