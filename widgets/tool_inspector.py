"""ToolInspector: everything about the selected call.

Arguments at every stage side by side (raw, parsed, prepared, validated) with what
changed between stages marked and validation errors pinned to their fields; the batch
lanes; the permission decision; live `on_update` output; the result; the call's own
events.

One widget draws it all line by line (Textual's Line API), as the timeline does:
showing another call renders its sections into lines and repaints the inspector,
with no layout of the screen (a layout repaints all of it; `benchmarks/select_latency.py`
counts them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from rich import box
from rich.console import RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.strip import Strip

from workbench.agent.events import ArgumentStage
from workbench.images import image_facts
from workbench.sanitize import literal
from workbench.sessions.compact import left_out_notice
from workbench.view.records import ToolCallRecord
from workbench.widgets.batch_lanes import render_lanes
from workbench.widgets.line_scroll import LineScrollView
from workbench.widgets.render import (
    details_view,
    field_errors,
    format_ms,
    format_times,
    pretty_json,
    raw_view,
    stage_view,
    status_badge,
)

OUTPUT_TAIL_LINES = 400
PANE_TITLES: dict[ArgumentStage, str] = {
    "parse": "raw",
    "lookup": "parsed",
    "prepare": "prepared",
    "validate": "validated",
}
"""One pane for each argument stage, titled by the arguments it shows: the raw text the
parse stage reads, what came out of parsing (what lookup checks), then of prepare and of
validate. A failed stage turns its own pane red."""
FOUR_ACROSS = 110
"""From this inspector width on, the four panes sit side by side; below it, two by two."""
TWO_ACROSS = 72
"""Below this inspector width the panes are stacked, one a row: two across left each
about twenty columns, and an edited URL showed as `"http://127.0.0.…`."""
REVEAL_LINES = 6
"""A failed stage whose first lines show from the top needs no scrolling to."""
PLACEHOLDER = "Select a tool call (click a card, or ↑/↓ in the timeline)."

Block = tuple[str | None, RenderableType | None]
"""A piece of the inspector: an anchor name (a section's title, "stage-parse"...) or
None, and what it draws (None: an anchor on the line the next block starts)."""


class ToolInspector(LineScrollView, can_focus=True):
    """Shows one `ToolCallRecord`; `show(record)` redraws when the record changed.

    Strings of several lines show as text blocks; J shows every value in its JSON form."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("J", "toggle_json", "JSON form"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "inspector--title",
        "inspector--pane",
        "inspector--pane-failed",
        "inspector--muted",
    }

    DEFAULT_CSS = """
    ToolInspector { padding: 0 1; }
    ToolInspector > .inspector--title { color: $accent; text-style: bold; }
    ToolInspector > .inspector--pane { color: $panel-lighten-2; }
    ToolInspector > .inspector--pane-failed { color: $error; }
    ToolInspector > .inspector--muted { color: $text-muted; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.record: ToolCallRecord | None = None
        self.rendered_rev = -1
        self.description = ""
        self.source = ""
        """Where the shown tool comes from when it is not built in (e.g. `mcp:files`)."""
        self.batch_calls: list[ToolCallRecord] = []
        self.now = 0.0
        self.hovered_id: str | None = None
        """The lane under the mouse: its durations show under the lanes."""
        self.json_form = False
        """Every value as JSON (J), multi-line strings escaped, instead of text blocks."""
        self._lines: list[Strip] = []
        self._anchors: dict[str, int] = {}
        """Where each section (by title) and stage pane starts, in drawing order."""

    # -- what it shows -----------------------------------------------------------------

    def show(
        self,
        record: ToolCallRecord | None,
        description: str = "",
        now: float = 0.0,
        source: str = "",
        batch: list[ToolCallRecord] | None = None,
    ) -> bool:
        """Show `record` (None: the placeholder); False if nothing needed redrawing."""
        if record is None:
            shown, self.record = self.record is not None, None
            self._draw()
            return shown
        batch = batch or [record]
        batch_rev = sum(r.rev for r in batch)
        ticking = any(r.started_at is not None and not r.finished for r in batch)
        if record is self.record and batch_rev == self.rendered_rev and not ticking:
            return False
        first = record is not self.record
        self.record, self.rendered_rev, self.description = record, batch_rev, description
        self.source, self.batch_calls, self.now = source, batch, now
        if first:
            self.hovered_id = None
        self._draw()
        if first:
            self.scroll_to(y=self._reveal_line(record), animate=False, immediate=True)
        return True

    def plain_lines(self) -> list[str]:
        """Every line as plain text (tests, copying)."""
        return [strip.text.rstrip() for strip in self._lines]

    def section_text(self, name: str) -> str:
        """The plain text of one section ("Result", "Events", "Batch lanes"...), title
        included; "" if it is not shown."""
        if name not in self._anchors:
            return ""
        lines = self.plain_lines()
        start = self._anchors[name]
        end = min((line for line in self._anchors.values() if line > start), default=len(lines))
        return "\n".join(lines[start:end]).strip("\n")

    def _reveal_line(self, record: ToolCallRecord) -> int:
        """Where a first look at `record` starts: the top, or, on a screen too small for
        it, the stage that failed."""
        if record.failed_stage is None:
            return 0
        start = self._anchors.get(f"stage-{record.failed_stage}", 0)
        return 0 if start + REVEAL_LINES <= self.scrollable_content_region.height else start

    # -- drawing -----------------------------------------------------------------------

    def _draw(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or not self.is_mounted:
            return  # drawn on the first resize
        console = self.app.console
        options = console.options.update(width=width, height=None, highlight=False, markup=False)
        base = self.rich_style
        lines: list[Strip] = []
        anchors: dict[str, int] = {}
        for anchor, renderable in self._blocks(width):
            if anchor is not None:
                anchors[anchor] = len(lines)
            if renderable is None:
                continue
            for line in console.render_lines(renderable, options, style=base, pad=True):
                lines.append(Strip(line, width))
        self._lines, self._anchors = lines, anchors
        self.set_virtual_size(Size(width, len(lines)))
        self.hide_empty_track()
        self.refresh()

    def action_toggle_json(self) -> None:
        self.json_form = not self.json_form
        self._draw()

    def render_line(self, y: int) -> Strip:
        index = y + int(self.scroll_y)
        width = self.scrollable_content_region.width
        if 0 <= index < len(self._lines):
            return self._lines[index].crop_extend(0, width, self.rich_style)
        return Strip.blank(width, self.rich_style)

    def on_resize(self) -> None:
        self._draw()  # the stages' columns and every wrap depend on the width

    def restyle(self) -> None:
        self._draw()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name)

    # -- the lanes under the mouse -----------------------------------------------------

    def on_mouse_move(self, event: events.MouseMove) -> None:
        start = self._anchors.get("Batch lanes")
        row = event.y + int(self.scroll_y) - (start or 0) - 1  # below the section's title
        hovered = (
            self.batch_calls[row].id
            if start is not None and 0 <= row < len(self.batch_calls)
            else None
        )
        if hovered != self.hovered_id:
            self.hovered_id = hovered
            self._draw()

    def on_leave(self, _event: events.Leave) -> None:
        if self.hovered_id is not None:
            self.hovered_id = None
            self._draw()

    # -- the blocks --------------------------------------------------------------------

    def _blocks(self, width: int) -> Iterator[Block]:
        record = self.record
        if record is None:
            yield None, Padding(Text(PLACEHOLDER, style=self._style("inspector--muted")), 1)
            return
        yield "head", self._head(record)
        narrow = self.screen.has_class("-narrow")
        first = self.description.splitlines()[0] if self.description else ""
        description = Text(literal(first), style="italic dim")
        if narrow:  # a small screen: one line of it
            description.no_wrap, description.overflow = True, "ellipsis"
        yield None, description
        if not narrow:
            yield None, Text("")
        columns = 4 if width >= FOUR_ACROSS else 2 if width >= TWO_ACROSS else 1
        yield from self._stages(record, columns)
        if record.started_at is not None:
            detail = self.hovered_id or record.id
            lanes = render_lanes(
                self.batch_calls, record.id, self.now, max(20, width), detail_id=detail
            )
            yield from self._section("Batch lanes", lanes, indent=0)
        yield from self._permission(record)
        yield from self._output(record)
        yield from self._result(record)
        yield from self._events(record)

    def _section(
        self, name: str, body: RenderableType, *, title: str | None = None, indent: int = 1
    ) -> Iterator[Block]:
        yield name, Text(title or name, style=self._style("inspector--title"))
        yield None, Padding(body, (0, 0, 0, indent)) if indent else body
        yield None, Text("")

    def _head(self, record: ToolCallRecord) -> Text:
        head = Text()
        head.append(literal(record.name), style="bold")
        if self.source == "builtin":  # where the code that runs lives: ours ...
            head.append("  builtin", style="dim")
        elif self.source:  # ... or an MCP server's, your file's
            head.append(f"  {literal(self.source)}", style="bold cyan")
        head.append(f"  {literal(record.id)}  ", style="dim")
        head.append_text(status_badge(record.status))
        times = record.times(self.now)
        if times is not None:
            head.append(f"  {format_times(times)}", style="dim")
        if record.by_hand:
            head.append(
                "\ncalled by you, by hand: the model did not ask for it and does "
                "not see its result",
                style="bold yellow",
            )
        if record.edited_args is not None:
            head.append(
                f"\n✎ arguments edited by you in {record.edited_in or 'a pause'}: it ran with "
                "the edited ones (the model's are in the stages)",
                style="bold yellow",
            )
        if record.injected:
            where = f" {record.injected_at}" if record.injected_at else ""
            head.append(f"\nresult injected by you{where}", style="bold yellow")
        return head

    def _stages(self, record: ToolCallRecord, columns: int) -> Iterator[Block]:
        failed = record.failed_stage
        errors = field_errors(record.arg_error) if failed == "validate" else {}
        blocks = not self.json_form
        prepared = stage_view(record.prepared, record.parsed, text_blocks=blocks)
        if failed == "prepare" and record.arg_error:
            prepared = Text(literal(record.arg_error), style="red")
        if failed == "validate":
            validated = stage_view(record.prepared, None, errors, text_blocks=blocks)
            if record.edited_args is None:
                validated.append("\nvalidation failed: execute never runs", style="bold red")
            else:
                validated.append("\nvalidation failed", style="bold red")
        else:
            validated = stage_view(record.validated, record.prepared, text_blocks=blocks)
        if record.edited_args is not None:
            validated.append("\n✎ edited by you, and what ran:\n", style="bold yellow")
            validated.append_text(
                stage_view(record.edited_args, record.model_args, text_blocks=blocks)
            )
        changed = record.prepared not in (None, record.parsed)
        panes: dict[ArgumentStage, tuple[Text, str]] = {
            "parse": (
                raw_view(record),
                "as you sent it" if record.by_hand else "as the model sent it",
            ),
            "lookup": (
                stage_view(record.parsed, text_blocks=blocks),
                "lookup failed" if failed == "lookup" else "",
            ),
            "prepare": (prepared, "changed by prepare_arguments" if changed else ""),
            "validate": (validated, ""),
        }
        stages = list(PANE_TITLES)
        for row in range(0, len(stages), columns):
            names = stages[row : row + columns]
            grid = Table.grid(padding=(0, 1), expand=True)
            for _ in names:
                grid.add_column(ratio=1)
            grid.add_row(*(self._pane(name, *panes[name], failed == name) for name in names))
            for name in names[1:]:
                yield f"stage-{name}", None  # the same row as the first
            yield f"stage-{names[0]}", grid
        yield None, Text("")

    def _pane(self, stage: ArgumentStage, body: Text, subtitle: str, failed: bool) -> Panel:
        style = self._style("inspector--pane-failed" if failed else "inspector--pane")
        return Panel(  # titles as Text: a str would be parsed as markup (and for emoji codes)
            body,
            title=Text(PANE_TITLES[stage]),
            title_align="left",
            subtitle=Text(subtitle) if subtitle else None,
            subtitle_align="right",
            box=box.ROUNDED,
            border_style=style,
            padding=(0, 1),
        )

    def _permission(self, record: ToolCallRecord) -> Iterator[Block]:
        decision, request = record.decision, record.request
        if decision is None and request is None:
            return
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
        yield from self._section("Permission", text)

    def _output(self, record: ToolCallRecord) -> Iterator[Block]:
        if not record.update_count:
            return
        lines = record.output.splitlines()
        body = Text()
        if len(lines) > OUTPUT_TAIL_LINES:
            notice = left_out_notice(record.output)  # a recording's cap on the output
            if notice is not None:
                body.append(literal(notice) + "\n", style="dim")
            body.append(f"… {len(lines) - OUTPUT_TAIL_LINES} earlier lines\n", style="dim")
        body.append(literal("\n".join(lines[-OUTPUT_TAIL_LINES:])))
        live = "streaming" if not record.finished else "final"
        unrecorded = f", {record.unrecorded} not recorded" if record.unrecorded else ""
        title = f"Live output  ({record.update_count} updates{unrecorded}, {live})"
        yield from self._section("Live output", body, title=title)

    def _result(self, record: ToolCallRecord) -> Iterator[Block]:
        pause = record.pause
        if record.content is None and pause is not None and pause.result is not None:
            body = Text(literal(_text(pause.result.content)), style="red")
            title = (
                "Result  (stopped here at @error: the model has not seen it; ctrl+o replaces it)"
            )
            yield from self._section("Result", body, title=title)
            return
        if record.content is None:
            yield from self._section("Result", Text("no result yet", style="dim"))
            return
        body = Text()
        style = "red" if record.is_error else ""
        images = 0
        for block in record.content:
            if block.type == "text":
                body.append(literal(block.text) + "\n", style=style)
            else:
                images += 1
                body.append(literal(f"[image {image_facts(block).describe()}]") + "\n", style="dim")
        if images and hasattr(self.app, "save_result_images"):  # the live app saves them
            body.append(
                'ctrl+p, "Save the selected call\'s images" writes them to files\n',
                style="italic dim",
            )
        if record.structured is not None:
            body.append("structured content ", style="bold")
            body.append(literal(pretty_json(record.structured)) + "\n")
        body.append_text(details_view(record.details, json_form=self.json_form))
        linked = getattr(self.app, "linked_resources", None)  # the live app, with its servers
        if linked is not None and linked(record) is not None:
            body.append(
                'ctrl+p, "MCP resources in the selected call\'s result" reads them',
                style="italic dim",
            )
        body.rstrip()
        flag = "is_error=True" if record.is_error else "is_error=False"
        injected = (
            f", injected by you {record.injected_at or ''}".rstrip() if record.injected else ""
        )
        title = f"Result  ({flag}{injected})"
        yield from self._section("Result", body, title=title)

    def _events(self, record: ToolCallRecord) -> Iterator[Block]:
        body = Text()
        events = record.events
        start = events[0][0] if events else 0.0
        for timestamp, label, detail in events:
            body.append(f"+{format_ms(timestamp - start):>7}  ", style="dim")
            body.append(literal(label))
            if detail:
                body.append("  " + literal(detail[:160]), style="dim")
            body.append("\n")
        body.rstrip()
        yield from self._section("Events", body)


def _text(content: list) -> str:
    return "".join(getattr(c, "text", "") for c in content)
