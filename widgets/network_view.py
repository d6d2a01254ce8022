"""NetworkViewScreen: the network view (F4), every model request and the run's clock.

"Requests": every model request, exactly as sent (auth stripped), with the response
status, the server-reported model, time to first token, total time, usage, and the
raw streamed chunks when they were captured. "Summary": per turn and for the whole
run, the time spent waiting for the model, running tools, waiting for approval and
paused, with tokens in and out.
"""

from __future__ import annotations

import json
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from workbench.bus_events import ProviderResponseEvent, ResponseReleasedEvent
from workbench.pricing import PriceTable, format_cost
from workbench.sanitize import literal
from workbench.view.fold import ViewState
from workbench.view.records import NetworkRecord
from workbench.view.summary import TimeSplit, summarize
from workbench.widgets.footer import Footer
from workbench.widgets.render import format_ms


def _status_label(response: ProviderResponseEvent | None) -> tuple[str, str]:
    """The request list's status word and its style."""
    if response is None:
        return "…", "dim"
    if response.aborted:
        return "aborted", "bold #ff8700"
    if response.simulated:
        return (
            "sim" if not response.error else "sim error"
        ), "cyan" if not response.error else "red"
    if response.status is None and response.finish_reason and not response.error:
        return response.finish_reason, "green"  # no HTTP: an ACP prompt's stop reason
    if response.status == 200 and not response.error:
        return "200", "green"
    return (str(response.status) if response.status else "error"), "red"


ORIGINS = {"acp": "ACP prompt", "proxy": "model (proxy)"}
"""What a request line of an ACP run is (other runs' lines name none: the proxy's own
app shows only the model's requests)."""


class NetworkViewScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f4", "close", "Close", key_display="esc"),
        Binding("r", "toggle_chunks", "Raw chunks"),
        Binding("s", "switch_tab", "Requests/Summary"),
    ]

    DEFAULT_CSS = """
    NetworkViewScreen { align: center middle; }
    NetworkViewScreen > TabbedContent {
        width: 96%; height: 92%; border: thick $accent; background: $surface;
    }
    NetworkViewScreen #requests { height: 1fr; }
    NetworkViewScreen #request-list { width: 34; height: 1fr; border-right: vkey $panel-lighten-2; }
    NetworkViewScreen #request-body { width: 1fr; height: 1fr; padding: 0 1; }
    NetworkViewScreen .empty { color: $text-muted; padding: 1; }
    """

    def __init__(
        self,
        state: ViewState,
        *,
        turn: int | None = None,
        now: float = 0.0,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__()
        self.prices = prices or PriceTable()
        self.state = state
        self.turn = turn
        self.now = now
        self.show_chunks = False
        self.records = list(state.network.values())

    def compose(self) -> ComposeResult:
        yield Footer()
        with TabbedContent(initial="tab-requests" if self.records else "tab-summary") as tabs:
            tabs.border_subtitle = (
                "↑/↓ pick a request · r raw chunks · s summary · Esc or F4 closes"
            )
            with TabPane("Requests", id="tab-requests"):
                if not self.records:
                    yield Static(
                        "No model requests yet. Send a message: each model request shows here, "
                        "with its body, status, timings and usage.",
                        classes="empty",
                    )
                else:
                    with Horizontal(id="requests"):
                        yield OptionList(*self._options(), id="request-list")
                        with VerticalScroll(id="request-body"):
                            yield Static("", id="request-detail")
            with TabPane("Summary", id="tab-summary"):
                with VerticalScroll():
                    yield Static(self._summary(), id="summary")

    def on_mount(self) -> None:
        if not self.records:
            return
        options = self.query_one(OptionList)
        index = 0
        if self.turn is not None:
            index = next((i for i, r in enumerate(self.records) if r.turn == self.turn), 0)
        options.highlighted = index
        self._show(index)
        options.focus()

    def _options(self) -> list[Option]:
        out = []
        acp = any(r.request.provider == "acp" for r in self.records)
        for i, record in enumerate(self.records):
            response = record.response
            status, style = _status_label(response)
            total = "" if response is None else format_ms(response.total_ms)
            label = Text(f"#{i + 1} turn {record.turn}  ")
            kind = ORIGINS.get(record.request.provider) if acp else None
            if kind is not None:  # an ACP run: its prompts and its model's requests
                label.append(f"{kind}  ", style="bold")
            label.append(status, style=style)
            label.append(f"  {total}", style="dim")
            out.append(Option(label, id=str(i)))
        return out

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option_index)

    def _show(self, index: int) -> None:
        if 0 <= index < len(self.records):
            self.query_one("#request-detail", Static).update(self._detail(self.records[index]))

    def _detail(self, record: NetworkRecord) -> Text:
        request, response = record.request, record.response
        text = Text()
        if request.simulated:
            text.append("SIMULATED", style="bold reverse cyan")
            text.append(
                " nothing was sent: the scripted model plays its scenario. Below is the body "
                "an OpenAI-compatible server would be sent for this turn.",
                style="cyan",
            )
        elif request.provider == "acp":
            text.append("JSON-RPC ", style="bold")
            text.append("session/prompt over the ACP agent's stdio")
        elif request.via == "stream_fn":
            text.append("YOUR stream_fn", style="bold reverse")
            text.append(
                " was called; the workbench sees no wire. Below is what the loop handed it "
                "(system prompt, messages, tools).",
                style="italic",
            )
        else:
            text.append("POST ", style="bold")
            text.append(literal(request.url or "(url not recorded)"))
        text.append(
            f"\nprovider {literal(request.provider)} · model {literal(request.model)}", style="dim"
        )
        if response is None:
            text.append("\n\nwaiting for the response…", style="italic")
        else:
            text.append("\n\n")
            status = response.status if response.status is not None else "no status"
            if response.simulated and not response.aborted:
                text.append("simulated reply", style="bold cyan")
                if response.finish_reason:
                    text.append(f" · finish_reason {literal(response.finish_reason)}")
            elif response.aborted:
                text.append("ABORTED", style="bold reverse #ff8700")
                text.append(
                    f" by the run's abort signal (the server had answered {status})",
                    style="#ff8700",
                )
            elif request.provider == "acp":
                reason = response.finish_reason or "none"
                style = "bold red" if response.error else "bold green"
                text.append(f"stopReason {literal(reason)}", style=style)
            elif request.via == "stream_fn":
                text.append(f"reply ended: {literal(response.finish_reason or 'no final message')}")
            else:
                text.append(
                    f"status {status}", style="bold green" if response.status == 200 else "bold red"
                )
            if response.server_model:
                text.append(f" · server says model {literal(response.server_model)}")
            ttft = format_ms(response.ttft_ms) if response.ttft_ms is not None else "—"
            text.append(f"\ntime to first token {ttft} · total {format_ms(response.total_ms)}")
            if response.usage is not None:
                u = response.usage
                text.append(
                    f"\ntokens {u.input:,} in · {u.output:,} out · {u.total_tokens:,} total"
                )
            if response.error:
                text.append("\nerror: " + literal(response.error), style="red")
        if request.sent_body is not None:
            text.append("\n\nrequest body as the agent sent it (auth stripped)\n", style="bold")
            text.append(literal(json.dumps(request.sent_body, indent=2, ensure_ascii=False)))
            text.append("\n\nrequest body as forwarded\n", style="bold")
            for note in request.repairs:
                text.append(literal(note) + "\n", style="dim")
        else:
            heading = "would be sent" if request.simulated else "exactly as sent; auth stripped"
            if request.via == "stream_fn":
                heading = "the stream_fn's arguments"
            text.append(f"\n\nrequest body ({heading})\n", style="bold")
            for note in request.repairs:  # proxy mode: a request the proxy sent itself
                text.append(literal(note) + "\n", style="dim")
        text.append(literal(json.dumps(request.body, indent=2, ensure_ascii=False)))
        if response is not None and response.chunks is not None:
            text.append(f"\n\nraw stream: {len(response.chunks)} chunks", style="bold")
            if self.show_chunks:
                for chunk in response.chunks:
                    text.append("\n" + literal(chunk), style="dim")
            else:
                text.append("  (r shows them)", style="dim")
        elif (
            response is not None
            and not response.simulated
            and request.via == "wire"
            and request.provider != "acp"
        ):
            text.append(
                "\n\nraw chunks were not captured (start with --capture-chunks)", style="dim"
            )
        if record.released is not None:
            text.append("\n\n" + literal(_released(record.released)), style="bold")
            released = record.released.chunks or []
            if record.released.body is not None:
                text.append(
                    "\n" + literal(json.dumps(record.released.body, indent=2, ensure_ascii=False))
                )
            elif released and self.show_chunks:
                for chunk in released:
                    text.append("\n" + literal(chunk), style="dim")
        return text

    def _summary(self) -> Table:
        summary = summarize(self.state, self.now or None, self.prices)
        table = Table(expand=True, box=None, header_style="bold")
        columns = (
            "turn",
            "model",
            "tools",
            "approval",
            "paused",
            "calls",
            "tokens in",
            "tokens out",
            "cost",
        )
        for column in columns:
            table.add_column(column, justify="right")
        rows = [(str(i), s) for i, s in summary.turns]
        runs: dict[int, TimeSplit] = {}
        for turn, (_i, split) in zip(self.state.turns, summary.turns, strict=True):
            runs.setdefault(turn.run, TimeSplit()).add(split)
        if len(runs) > 1:
            rows += [(f"run {run}", split) for run, split in runs.items()]
        rows.append(("session", summary.total))
        for label, s in rows:
            table.add_row(
                label,
                format_ms(s.model_ms),
                format_ms(s.tools_ms),
                format_ms(s.approval_ms),
                format_ms(s.paused_ms),
                str(s.calls),
                f"{s.input_tokens:,}",
                f"{s.output_tokens:,}",
                format_cost(s.cost),
                style="bold" if not label[0].isdigit() else "",
            )
        return table

    def action_toggle_chunks(self) -> None:
        self.show_chunks = not self.show_chunks
        if self.records:
            self._show(self.query_one(OptionList).highlighted or 0)

    def action_switch_tab(self) -> None:
        tabs = self.query_one(TabbedContent)
        pane = "tab-summary" if tabs.active == "tab-requests" else "tab-requests"
        for target in self.query(f"#{pane} OptionList, #{pane} VerticalScroll"):
            target.focus()  # first: the tabs follow focus, and would switch straight back
            break
        else:
            self.set_focus(None)
        tabs.active = pane

    def action_close(self) -> None:
        self.dismiss(None)


def _released(released: ResponseReleasedEvent) -> str:
    """Proxy mode: how the response reached the agent."""
    if not released.changed:
        how = "held for the decisions, then " if released.held else ""
        return f"response released to the agent: {how}exactly as received"
    removed = f", calls taken out: {', '.join(released.removed)}" if released.removed else ""
    count = f" ({len(released.chunks)} chunks; r shows them)" if released.chunks is not None else ""
    if not released.held:
        return f"response released to the agent as the rest of its reply, joined to it{count}"
    if released.continued:
        return (
            f"response held and rewritten{removed}{count}; the proxy answered those calls "
            "upstream itself, and the agent's reply goes on with the model's answer "
            "(the next request)"
        )
    return f"response released to the agent: held and rewritten{removed}{count}"
