"""ToolInspector: everything about the selected call.

Arguments at every stage side by side (raw, parsed, prepared, validated) with what
changed between stages marked and validation errors pinned to their fields; the
permission decision; live `on_update` output; the result; the call's own events.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import Grid, Vertical, VerticalScroll
from textual.widgets import Static

from widgets import static_update
from widgets.batch_lanes import BatchLanes
from widgets.render import (
    field_errors,
    format_ms,
    pretty_json,
    raw_view,
    stage_badge,
    stage_view,
)
from workbench.sanitize import literal
from workbench.view.records import ToolCallRecord

OUTPUT_TAIL_LINES = 400


class Section(Vertical):
    DEFAULT_CSS = """
    Section { height: auto; margin: 0 0 1 0; }
    Section > .title { text-style: bold; color: $accent; }
    Section > .body { padding: 0 0 0 1; }
    """

    def __init__(self, title: str, section_id: str) -> None:
        super().__init__(id=section_id)
        self.title_text = title

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.title_text, classes="title")
        yield Static("", classes="body")

    def show(self, body: Text | str, title: str | None = None) -> None:
        static_update.update(self.query_one(".body", Static), body)
        if title is not None:
            static_update.update(self.query_one(".title", Static), title)


class StagePane(Vertical):
    DEFAULT_CSS = """
    StagePane { height: auto; border: round $panel-lighten-2; padding: 0 1; }
    StagePane.-failed { border: round $error; }
    StagePane > Static { height: auto; }
    """

    def __init__(self, stage: str) -> None:
        super().__init__(id=f"stage-{stage}")
        self.border_title = stage

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("")

    def show(self, body: Text, *, failed: bool, subtitle: str = "") -> None:
        static_update.update(self.query_one(Static), body)
        self.set_class(failed, "-failed")
        self.border_subtitle = subtitle


class ToolInspector(VerticalScroll):
    """Shows one `ToolCallRecord`; `show(record)` redraws when the record changed."""

    DEFAULT_CSS = """
    ToolInspector { padding: 0 1; scrollbar-gutter: stable; }
    ToolInspector > #inspector-desc { margin: 0 0 1 0; }
    ToolInspector > .placeholder { color: $text-muted; padding: 1; }
    ToolInspector #stages { grid-size: 2; grid-gutter: 0 1; height: auto; margin: 0 0 1 0; }
    ToolInspector.-wide #stages { grid-size: 4; }
    ToolInspector #sec-lanes { height: auto; margin: 0 0 1 0; }
    ToolInspector #sec-lanes > .title { text-style: bold; color: $accent; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.record: ToolCallRecord | None = None
        self.rendered_rev = -1
        self.description = ""
        self.source = ""
        """Where the shown tool comes from when it is not built in (e.g. `mcp:files`)."""
        self._reveal: StagePane | None = None
        self._reveal_tries = 0

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("Select a tool call (click a card, or ↑/↓ in the timeline).", classes="placeholder")
        yield Static("", id="inspector-head")
        yield Static("", id="inspector-desc")
        with Grid(id="stages"):
            for stage in ("raw", "parsed", "prepared", "validated"):
                yield StagePane(stage)
        with Vertical(id="sec-lanes"):
            yield Static("Batch lanes", classes="title")
            yield BatchLanes("")
        yield Section("Permission", "sec-permission")
        yield Section("Live output", "sec-output")
        yield Section("Result", "sec-result")
        yield Section("Events", "sec-events")

    def on_mount(self) -> None:
        self._set_visible(False)

    def on_resize(self) -> None:
        self.set_class(self.size.width >= 110, "-wide")

    def _set_visible(self, visible: bool) -> None:
        self.query_one(".placeholder").display = not visible
        for child in self.children:
            if not child.has_class("placeholder"):
                child.display = visible

    def show(
        self, record: ToolCallRecord | None, description: str = "", now: float = 0.0,
        source: str = "", batch: list[ToolCallRecord] | None = None,
    ) -> bool:
        """Show `record` (None: the placeholder); False if nothing needed redrawing."""
        if record is None:
            shown, self.record = self.record is not None, None
            self._set_visible(False)
            return shown
        batch = batch or [record]
        batch_rev = sum(r.rev for r in batch)
        ticking = any(r.started_at is not None and not r.finished for r in batch)
        if record is self.record and batch_rev == self.rendered_rev and not ticking:
            return False
        first = record is not self.record
        self.record, self.rendered_rev, self.description = record, batch_rev, description
        self.source = source
        self._set_visible(True)
        self._head(record, now)
        self._stages(record)
        lanes = self.query_one(BatchLanes)
        lanes.show(batch, record.id, now)
        self.query_one("#sec-lanes").display = record.started_at is not None
        self._permission(record)
        self._output(record)
        self._result(record)
        self._events(record)
        if first:
            self.scroll_home(animate=False, immediate=True)
            self._reveal = None
            if record.failed_stage is not None:
                # on a small screen the failing stage may be below the fold: show it
                pane = {"parse": "raw", "lookup": "parsed", "prepare": "prepared"}.get(record.failed_stage, "validated")
                self._reveal, self._reveal_tries = self.query_one(f"#stage-{pane}", StagePane), 0
                self.call_after_refresh(self._reveal_failed_stage)
        return True

    def _reveal_failed_stage(self) -> None:
        """Scroll the failing stage into view once the new call's layout is in place
        (a frame or two after `show`: until then the pane's place is the old call's)."""
        target = self._reveal
        if target is None or not self.is_mounted:
            return
        laid_out = target.region.height > 0 and target.virtual_region.bottom <= self.virtual_size.height
        if not laid_out and self._reveal_tries < 10:
            self._reveal_tries += 1
            self.call_after_refresh(self._reveal_failed_stage)
            return
        self._reveal = None
        self.scroll_to_widget(target, animate=False, immediate=True, top=False)

    # -- sections --------------------------------------------------------------------

    def _head(self, record: ToolCallRecord, now: float) -> None:
        head = Text()
        head.append(record.name, style="bold")
        if self.source.startswith("mcp:"):  # the MCP server the tool lives on
            head.append(f"  {literal(self.source)}", style="bold cyan")
        head.append(f"  {record.id}  ", style="dim")
        head.append_text(stage_badge(record.stage))
        elapsed = record.elapsed_ms(now)
        if elapsed is not None:
            head.append(f"  {format_ms(elapsed)}", style="dim")
        if record.injected:
            head.append("  result injected by you", style="bold yellow")
        static_update.update(self.query_one("#inspector-head", Static), head)
        description = literal(self.description.splitlines()[0]) if self.description else ""
        static_update.update(self.query_one("#inspector-desc", Static), Text(description, style="italic dim"))

    def _stages(self, record: ToolCallRecord) -> None:
        errors = field_errors(record.arg_error) if record.failed_stage == "validate" else {}
        failed = record.failed_stage
        panes = {pane.id: pane for pane in self.query(StagePane)}
        panes["stage-raw"].show(raw_view(record), failed=failed == "parse", subtitle="as the model sent it")
        parsed_note = "lookup failed" if failed == "lookup" else ""
        panes["stage-parsed"].show(stage_view(record.parsed), failed=failed == "lookup", subtitle=parsed_note)
        prepared = stage_view(record.prepared, record.parsed)
        if failed == "prepare" and record.arg_error:
            prepared = Text(literal(record.arg_error), style="red")
        panes["stage-prepared"].show(
            prepared,
            failed=failed == "prepare",
            subtitle="changed by prepare_arguments" if record.prepared not in (None, record.parsed) else "",
        )
        if failed == "validate":
            validated = stage_view(record.prepared, None, errors)
            validated.append("\nvalidation failed: execute never runs", style="bold red")
        else:
            validated = stage_view(record.validated, record.prepared)
        if record.edited_args is not None:
            validated.append("\nedited by you:\n", style="bold yellow")
            validated.append(literal(pretty_json(record.edited_args)), style="yellow")
        panes["stage-validated"].show(validated, failed=failed == "validate")

    def _permission(self, record: ToolCallRecord) -> None:
        section = self.query_one("#sec-permission", Section)
        decision, request = record.decision, record.request
        if decision is None and request is None:
            section.display = False
            return
        section.display = True
        text = Text()
        if decision is None:
            text.append("waiting for a decision…", style="bold magenta")
        else:
            style = "green" if decision.decision == "allow" else "bold red"
            text.append(f"{decision.decision}", style=style)
            text.append(f" ({decision.scope.replace('_', ' ')})", style="dim")
            text.append(f" · by {decision.decided_by}")
            if decision.rule:
                text.append(" ")
                text.append(literal(decision.rule), style="italic")
            if decision.rule_source:
                text.append(f" ({literal(decision.rule_source)})", style="dim")
            text.append(f" · waited {format_ms(decision.waited_ms)}", style="dim")
            if decision.reason:
                text.append("\nreason: " + literal(decision.reason))
        section.show(text)

    def _output(self, record: ToolCallRecord) -> None:
        section = self.query_one("#sec-output", Section)
        if not record.update_count:
            section.display = False
            return
        section.display = True
        lines = record.output.splitlines()
        cut = len(lines) > OUTPUT_TAIL_LINES
        body = Text()
        if cut:
            body.append(f"… {len(lines) - OUTPUT_TAIL_LINES} earlier lines\n", style="dim")
        body.append(literal("\n".join(lines[-OUTPUT_TAIL_LINES:])))
        live = "streaming" if not record.finished else "final"
        section.show(body, title=f"Live output  ({record.update_count} updates, {live})")

    def _result(self, record: ToolCallRecord) -> None:
        section = self.query_one("#sec-result", Section)
        if record.result is None:
            section.show(Text("no result yet", style="dim"), title="Result")
            return
        body = Text()
        style = "red" if record.is_error else ""
        for block in record.result.content:
            if block.type == "text":
                body.append(literal(block.text) + "\n", style=style)
            else:
                body.append(f"[image {block.mime_type}, {len(block.data)} base64 chars]\n", style="dim")
        if record.result.details not in (None, {}):
            body.append("details ", style="bold dim")
            body.append(literal(pretty_json(record.result.details)), style="dim")
        flag = "is_error=True" if record.is_error else "is_error=False"
        section.show(body, title=f"Result  ({flag}{', injected' if record.injected else ''})")

    def _events(self, record: ToolCallRecord) -> None:
        body = Text()
        start = record.events[0].timestamp if record.events else 0.0
        for event in record.events:
            body.append(f"+{format_ms(event.timestamp - start):>7}  ", style="dim")
            body.append(literal(event.label))
            if event.detail:
                body.append("  " + literal(event.detail[:160]), style="dim")
            body.append("\n")
        self.query_one("#sec-events", Section).show(body)
