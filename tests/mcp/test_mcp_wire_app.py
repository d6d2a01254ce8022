"""The wire view: every JSON-RPC message with every server, whole, filtered by server,
method, direction or any text, shown indented, copied."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.widgets import Input, OptionList, Static

from tests.mcp.helpers import TOOLBOX, calls, mcp_run
from tests.widgets.helpers import wait_for
from widgets.mcp_wire import McpWireScreen
from workbench.mcp import server_from_command


class Host(App[None]):
    def __init__(self, hub: Any, start: str = "") -> None:
        super().__init__()
        self.hub, self.start = hub, start
        self.copied: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(McpWireScreen(self.hub, self.start))

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)


async def test_every_message_is_there_whole_and_filters_narrow_them() -> None:
    second = server_from_command(TOOLBOX).model_copy(update={"name": "second"})
    big = "x" * 5000  # longer than the old view's cut
    async with mcp_run(calls(("toolbox__fail", {"reason": big})), configured=[second]) as run:
        await run.agent.prompt("go")
        app = Host(run.hub, "server:toolbox")
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, McpWireScreen)
            assert {server for server, _ in screen.rows} == {"toolbox"}
            total = len(screen.rows)
            screen.query_one("#wire-filter", Input).value = "server:toolbox method:tools/call →"
            await wait_for(pilot, lambda: len(screen.rows) == 1)
            server, entry = screen.rows[0]
            assert entry.outgoing and entry.summary.startswith("tools/call fail #")
            shown = str(screen.query_one("#wire-message", Static).render())
            assert big in shown and '"name": "fail"' in shown  # whole, indented
            await pilot.press("c")
            assert app.copied == [entry.text]
            screen.query_one("#wire-filter", Input).value = "received server:toolbox"
            await wait_for(pilot, lambda: len(screen.rows) < total)
            assert all(not e.outgoing for _, e in screen.rows)
            screen.query_one("#wire-filter", Input).value = "no-such-thing-anywhere"
            await wait_for(pilot, lambda: screen.rows == [])
            assert screen.query_one(OptionList).option_count == 0
            screen.query_one("#wire-filter", Input).value = ""
            await wait_for(pilot, lambda: {s for s, _ in screen.rows} == {"toolbox", "second"})
