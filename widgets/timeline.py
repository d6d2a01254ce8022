"""Timeline: the conversation in order, assistant text as Markdown, tool calls as cards.

It renders `ViewState.items` and keeps widgets for items it has already mounted,
redrawing only those whose `rev` changed since the last sync.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from widgets.tool_card import ToolCallCard
from workbench.agent.clock import now_ms
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


class AssistantView(Vertical):
    """One assistant message: thinking (collapsed), text (Markdown), tool-call cards."""

    DEFAULT_CSS = """
    AssistantView { height: auto; margin: 1 0 0 0; }
    AssistantView > .head { color: $success; text-style: bold; padding: 0 1; }
    AssistantView > Markdown { margin: 0 0 0 1; padding: 0 1; }
    AssistantView > Collapsible { margin: 0 0 0 1; border: none; padding: 0; background: transparent; }
    AssistantView > .failure { color: $error; padding: 0 1; }
    AssistantView > .aborted { color: $warning; padding: 0 1; }
    """

    def __init__(
        self, item: TimelineItem, labels: dict[str, str], state: ViewState, timeline: Timeline
    ) -> None:
        super().__init__()
        self.timeline = timeline
        self.item = item
        self.labels = labels
        self.state = state
        self.rendered_rev = -1
        self._parts: list[Widget] = []
        self._keys: list[str] = []
        self._failure: Static | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(f"assistant · turn {self.item.turn}", classes="head")

    def on_mount(self) -> None:
        self.sync(self.state, now_ms())

    def sync(self, state: ViewState, now: float) -> None:
        item = self.item
        if item.rev != self.rendered_rev:
            self.rendered_rev = item.rev
            self._sync_blocks(state, now)
            self._sync_failure()
        for part in self._parts:
            if isinstance(part, ToolCallCard):
                part.sync(now)

    def _sync_blocks(self, state: ViewState, now: float) -> None:
        for index, block in enumerate(self.item.blocks):
            key = f"{block.kind}:{block.tool_call_id or index}"
            if index < len(self._keys) and self._keys[index] != key:
                for stale in self._parts[index:]:
                    stale.remove()
                del self._parts[index:], self._keys[index:]
            if index >= len(self._parts):
                widget = self._make(block.kind, block.tool_call_id, state, now)
                if widget is None:
                    continue
                self._parts.append(widget)
                self._keys.append(key)
                self.mount(widget, before=self._failure)
            part = self._parts[index]
            if isinstance(part, Markdown):
                text = literal(block.text)
                if getattr(part, "_wb_text", None) != text:
                    part._wb_text = text  # type: ignore[attr-defined]
                    if part.is_mounted:
                        part.update(text)
                    else:
                        part.call_after_refresh(self._late_update, part)
            elif isinstance(part, Collapsible):
                body: Static = part._wb_body  # type: ignore[attr-defined]
                body.update(Text(literal(block.text), style="italic dim"))
                part.title = "thinking…" if self.item.streaming else "thinking"

    @staticmethod
    def _late_update(part: Markdown) -> None:
        part.update(part._wb_text)  # type: ignore[attr-defined]

    def _make(self, kind: str, call_id: str | None, state: ViewState, now: float) -> Widget | None:
        if kind == "text":
            return Markdown("")
        if kind == "thinking":
            body = Static("")
            collapsible = Collapsible(body, title="thinking", collapsed=True)
            collapsible._wb_body = body  # type: ignore[attr-defined]
            return collapsible
        record = state.calls.get(call_id or "")
        if record is None:
            return None
        card = ToolCallCard(record, self.labels.get(record.name, record.name), now)
        self.timeline.register(card)
        return card

    def _sync_failure(self) -> None:
        item = self.item
        if item.stop_reason not in ("error", "aborted") or self._failure is not None:
            return
        if item.stop_reason == "aborted":
            self._failure = Static(Text("■ aborted: " + literal(item.error or "")), classes="aborted")
        else:
            self._failure = Static(Text("✗ model error: " + literal(item.error or "")), classes="failure")
        self.mount(self._failure)


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

    def __init__(self, labels: dict[str, str], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.labels = labels
        self._views: list[Widget] = []
        self._cards: dict[str, ToolCallCard] = {}
        self._selected: str | None = None
        self._empty = Static(
            "Nothing yet. Type a message below and press Enter "
            "(the demo's prompt is already there).",
            classes="empty",
        )

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._empty

    def on_mount(self) -> None:
        self.anchor()  # stay at the newest item as content grows, until the user scrolls up

    def reset(self) -> None:
        for view in self._views:
            view.remove()
        self._views.clear()
        self._cards.clear()
        self._empty.display = True

    def sync(self, state: ViewState, now: float) -> None:
        new: list[Widget] = []
        for item in state.items[len(self._views) :]:
            view: Widget
            if item.kind == "user":
                view = UserView(item)
            elif item.kind == "assistant":
                view = AssistantView(item, self.labels, state, self)
            else:
                view = NoticeView(item)
            self._views.append(view)
            new.append(view)
        if new:
            self._empty.display = False
            self.mount_all(new)
        for view in self._views:
            if isinstance(view, AssistantView) and view.is_mounted:
                view.sync(state, now)


    def cards(self) -> list[ToolCallCard]:
        """Every card, in timeline order."""
        return list(self.query(ToolCallCard))

    def card(self, tool_call_id: str) -> ToolCallCard | None:
        return self._cards.get(tool_call_id)

    def register(self, card: ToolCallCard) -> None:
        self._cards[card.record.id] = card
        card.set_class(card.record.id == self._selected, "-selected")

    def mark_selected(self, tool_call_id: str | None) -> None:
        """Highlight the selected call's card (and only that one)."""
        if tool_call_id == self._selected:
            return
        for old_or_new in (self._selected, tool_call_id):
            card = self._cards.get(old_or_new or "")
            if card is not None:
                card.set_class(old_or_new == tool_call_id, "-selected")
        self._selected = tool_call_id
