"""Timeline: the conversation in order, assistant text as Markdown, tool calls as cards.

It renders `ViewState.items` and keeps the widgets of items it already mounted,
redrawing only those whose `rev` changed since the last sync. Each assistant message
is a handful of widgets whatever its size (its tool calls share one `ToolBatchView`),
so long runs stay cheap to lay out.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual import events
from textual.containers import Vertical, VerticalScroll
from textual.widget import AwaitMount, Widget
from textual.widgets import Collapsible, Static

from widgets.tool_card import ToolBatchView
from workbench.sanitize import literal
from workbench.view.fold import ViewState
from workbench.view.records import TimelineItem


class UserView(Static):
    DEFAULT_CSS = """
    UserView { margin: 1 0 0 0; padding: 0 1; background: $primary 12%; border-left: thick $primary; }
    """

    def __init__(self, item: TimelineItem) -> None:
        label = Text("you (steering)  " if item.steering else "you  ", style="bold")
        label.append(literal(item.text))
        super().__init__(label)


class MarkdownText(Static):
    """Assistant text rendered as Markdown (one widget, redrawn as text streams in)."""

    DEFAULT_CSS = "MarkdownText { margin: 0 0 0 1; padding: 0 1; }"

    def __init__(self) -> None:
        super().__init__("")
        self.text = ""
        self._height: tuple[str, int, int] | None = None

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.update(RichMarkdown(text, code_theme="monokai", hyperlinks=False))

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[no-untyped-def, override]
        # Laying out the timeline asks every message for its height; rendering Markdown
        # to find out is the expensive part, so remember it per text and width.
        if self._height is None or self._height[:2] != (self.text, width):
            self._height = (self.text, width, super().get_content_height(container, viewport, width))
        return self._height[2]


class TurnHead(Static):
    """The assistant message's heading; clicking it shows that turn's model request."""

    DEFAULT_CSS = "TurnHead { color: $success; text-style: bold; padding: 0 1; } TurnHead:hover { text-style: bold underline; }"

    def __init__(self, turn: int) -> None:
        super().__init__(f"assistant · turn {turn}")
        self.turn = turn

    def on_click(self) -> None:
        self.app.run_action(f"run_details({self.turn})")


class AssistantView(Vertical):
    """One assistant message: thinking (collapsed), text (Markdown), its tool calls."""

    DEFAULT_CSS = """
    AssistantView { height: auto; margin: 1 0 0 0; }
    AssistantView > .head { color: $success; text-style: bold; padding: 0 1; }
    AssistantView > Collapsible { margin: 0 0 0 1; border: none; padding: 0; background: transparent; }
    AssistantView > .failure { color: $error; padding: 0 1; }
    AssistantView > .aborted { color: $warning; padding: 0 1; }
    """

    def __init__(self, item: TimelineItem, timeline: Timeline) -> None:
        super().__init__()
        self.item = item
        self.timeline = timeline
        self.rendered_rev = -1
        self._texts: dict[int, MarkdownText] = {}
        self._thinking: dict[int, tuple[Collapsible, Static]] = {}
        self.batch: ToolBatchView | None = None
        self._failure: Static | None = None
        self._composing: list[Widget] | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        # Build what is already known here rather than mounting piece by piece later:
        # each later mount costs the whole timeline a layout pass.
        yield TurnHead(self.item.turn)
        self._composing: list[Widget] | None = []
        self.rendered_rev = self.item.rev
        self._sync_blocks(self.timeline.state)
        self._sync_failure()
        built, self._composing = self._composing, None
        yield from built

    def on_mount(self) -> None:
        if self.batch is not None:
            self.batch.sync(self.timeline.clock())

    def sync(self, state: ViewState, now: float) -> None:
        item = self.item
        if item.rev != self.rendered_rev:
            self.rendered_rev = item.rev
            self._sync_blocks(state)
            self._sync_failure()
        if self.batch is not None:
            self.batch.sync(now)

    def _add(self, widget: Widget, before: Widget | None = None) -> None:
        if self._composing is not None:
            self._composing.append(widget)
        else:
            self.mount(widget, before=before)

    def _sync_blocks(self, state: ViewState) -> None:
        call_ids: list[str] = []
        for index, block in enumerate(self.item.blocks):
            if block.kind == "toolCall":
                if block.tool_call_id:
                    call_ids.append(block.tool_call_id)
            elif block.kind == "text":
                self._text_widget(index).set_text(literal(block.text))
            else:
                collapsible, body = self._thinking_widget(index)
                body.update(Text(literal(block.text), style="italic dim"))
                collapsible.title = "thinking…" if self.item.streaming else "thinking"
        records = [state.calls[i] for i in call_ids if i in state.calls]
        if records and self.batch is None:
            self.batch = ToolBatchView(records, self.timeline.labels, self.timeline.slow_after_ms)
            self.timeline.register(self.batch)
            self._add(self.batch, before=self._failure)
        elif self.batch is not None:
            self.batch.set_records(records)
            self.timeline.register(self.batch)

    def _text_widget(self, index: int) -> MarkdownText:
        widget = self._texts.get(index)
        if widget is None:
            widget = self._texts[index] = MarkdownText()
            self._add(widget, before=self.batch or self._failure)
        return widget

    def _thinking_widget(self, index: int) -> tuple[Collapsible, Static]:
        pair = self._thinking.get(index)
        if pair is None:
            body = Static("")
            pair = self._thinking[index] = (Collapsible(body, title="thinking", collapsed=True), body)
            self._add(pair[0], before=self.batch or self._failure)
        return pair

    def _sync_failure(self) -> None:
        item = self.item
        if item.stop_reason not in ("error", "aborted") or self._failure is not None:
            return
        if item.stop_reason == "aborted":
            self._failure = Static(Text("■ aborted: " + literal(item.error or "")), classes="aborted")
        else:
            self._failure = Static(Text("✗ model error: " + literal(item.error or "")), classes="failure")
        self._add(self._failure)


class NoticeView(Static):
    DEFAULT_CSS = """
    NoticeView { margin: 1 0 0 0; padding: 0 1; color: $text-muted; text-style: italic; }
    NoticeView.-error { color: $error; }
    NoticeView.-warning { color: $warning; }
    """

    def __init__(self, item: TimelineItem) -> None:
        super().__init__(Text(literal(item.text)), classes=f"-{item.level}")


class Timeline(VerticalScroll, can_focus=False):
    """All timeline items; `sync(state)` mounts new ones and updates changed ones."""

    DEFAULT_CSS = """
    Timeline { padding: 0 1 1 0; }
    Timeline > .empty { color: $text-muted; padding: 1 2; }
    """

    def __init__(
        self,
        labels: dict[str, str],
        state: ViewState,
        clock: Callable[[], float],
        **kwargs: object,
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.labels = labels
        self.state = state
        self.clock = clock
        self.slow_after_ms = 10_000.0
        """When a running call's time turns into a warning."""
        """What "now" is for elapsed times (the wall clock live, the event time in replay)."""
        self._views: list[Widget] = []
        self._batches: dict[str, ToolBatchView] = {}
        self._selected: str | None = None
        self._empty = Static(
            "Nothing yet. Type a message below and press Enter "
            "(the demo's prompt is already there).",
            classes="empty",
        )

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._empty

    follow = True
    """Keep the newest item in view (until the user scrolls up or picks a call)."""

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.follow = False

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.follow = self.scroll_y >= self.max_scroll_y - 2

    def follow_newest(self) -> None:
        """Scroll to the end if following (call after the layout has settled)."""
        if self.follow:
            self.scroll_end(animate=False, immediate=True)

    def reset(self, state: ViewState) -> None:
        """Forget every item (replay jumps back, a new session)."""
        for view in self._views:
            view.remove()
        self._views.clear()
        self._batches.clear()
        self.state = state
        self._empty.display = True

    def sync(self, state: ViewState, now: float) -> AwaitMount | None:
        """Bring the timeline up to `state`; returns the pending mount of new items, if any."""
        if state is not self.state:
            self.reset(state)
        new: list[Widget] = []
        for item in state.items[len(self._views) :]:
            view: Widget
            if item.kind == "user":
                view = UserView(item)
            elif item.kind == "assistant":
                view = AssistantView(item, self)
            else:
                view = NoticeView(item)
            self._views.append(view)
            new.append(view)
        mounting = None
        if new:
            self._empty.display = False
            mounting = self.mount_all(new)
        for view in self._views:
            if isinstance(view, AssistantView) and view.is_mounted:
                view.sync(state, now)
        return mounting

    # -- tool calls ------------------------------------------------------------------

    def register(self, batch: ToolBatchView) -> None:
        for call_id in batch.ids():
            self._batches[call_id] = batch
        if self._selected in batch.ids():
            batch.set_selected(self._selected)

    def batches(self) -> list[ToolBatchView]:
        """Every batch of tool calls, in timeline order."""
        return list(self.query(ToolBatchView))

    def batch_of(self, tool_call_id: str) -> ToolBatchView | None:
        return self._batches.get(tool_call_id)

    def mark_selected(self, tool_call_id: str | None) -> None:
        """Highlight the selected call (and only that one)."""
        if tool_call_id == self._selected:
            return
        old = self._batches.get(self._selected or "")
        if old is not None:
            old.set_selected(None)
        self._selected = tool_call_id
        new = self._batches.get(tool_call_id or "")
        if new is not None:
            new.set_selected(tool_call_id)

    def show_call(self, tool_call_id: str) -> None:
        """Scroll so the call's card is visible (and stop following the newest item)."""
        batch = self._batches.get(tool_call_id)
        if batch is not None:
            self.follow = False
            batch.scroll_visible_row(batch.ids().index(tool_call_id))
