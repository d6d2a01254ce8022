"""HelpScreen: the keys, and how to read the screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from workbench.widgets.footer import Footer

HELP = """\
# Agent Workbench

The **timeline** (left) shows the conversation; every tool call is a card with its
status, its time and the first line of its result. The **inspector** (right) shows
the selected call: its arguments at every stage of the pipeline (raw → parsed →
prepared → validated, changes marked `+`/`~`/`-`), the permission decision, live
output, the result and the call's own events.

| Key | Does |
| --- | --- |
| Enter | send the message (during a run: queue it as steering or a follow-up) |
| ctrl+t | switch queued messages between steering and follow-up |
| Tab to the timeline, ↑/↓ (j/k) | move between tool calls; the inspector follows |
| J (inspector) | every value in its JSON form, or text blocks and diffs again |
| t (timeline) | open every thinking block, or close them all |
| T (timeline) | open or close the thinking of the selected call's reply |
| click | a card: inspect it; a thinking line: open it; a turn's heading: its request |
| **ctrl+c** | **cancel the run** (fires the abort signal, also inside dialogs) |
| F8 | cancel only the selected running call |
| F4 | the network view: the requests as sent (simulated on the demo); where time and money went |
| F7 | MCP servers: state, tools, log, stderr, wire (r restarts, o: resources) |
| F6 | step mode on/off: pause before every model request and tool execution |
| F10 | step to the next pause point |
| F5 | continue (leave step mode, stop only at breakpoints) |
| ctrl+r | run to the end, ignoring every pause |
| F9 | breakpoint on the selected call's tool |
| ctrl+b | breakpoints of every kind |
| F2 | edit the arguments at a pause before a tool, or failed ones (run again) |
| ctrl+o | at a pause before a tool: answer it yourself; at an error result (`@error`): replace it |
| ctrl+l | back to the message box |
| ctrl+n | a new run: fresh scratch workspace, new session file |
| ctrl+z | rewind to the end of an earlier turn: its files put back, on from there in a fork |
| ctrl+s | the session library: search the recorded sessions, open one in replay |
| ctrl+p | command palette: every action, themes, "Call a tool by hand…" |
| ctrl+q | quit |

A key that cannot act where you press it says why. A card's time is its work;
`+… wait` is how long it waited on you or its batch. **✎ edited by you** and
**injected by you** mark what you changed (the inspector shows the model's own).

In a permission dialog typing never decides: letters go into the reason box.
**ctrl+y** allows once, **ctrl+n** goes to the reason box (there **Enter** denies;
the model receives the reason), **F2** edits the arguments, Tab reaches the
"always" buttons.

Breakpoints: a tool name or argument pattern (before it runs), `@invalid` (any
failed arguments) or one stage of it (`@parse`, `@unknown`, `@prepare`,
`@validate`), and `@error` (any error result, before the model sees it).

Nothing from the model or a tool is interpreted: markup and terminal escapes are
shown as they are.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss", "Close", key_display="esc"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 95%; height: 80%; border: thick $accent; background: $surface;
        padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Help"
            scroll.border_subtitle = "↑/↓ PgUp/PgDn scroll · Esc, F1 or q closes"
            yield Markdown(HELP)
        yield Footer()

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
