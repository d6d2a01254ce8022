"""The wire view: every JSON-RPC message with every server, whole, filtered by server,
method, direction or any text, shown indented, copied."""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widgets import Input, OptionList, Static

from tests.mcp.helpers import TOOLBOX, calls, mcp_run
from tests.widgets.helpers import wait_for
from workbench.mcp import server_from_command
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.widgets.mcp_wire import McpWireScreen, hub_rows


class Host(App[None]):
    def __init__(self, hub: Any, start: str = "") -> None:
        super().__init__()
        self.hub, self.start = hub, start
        self.copied: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(McpWireScreen(hub_rows(self.hub), self.start))

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


async def test_the_session_records_the_wire_and_replay_shows_it(tmp_path: Path) -> None:
    from workbench.mcp import McpServerConfig
    from workbench.sessions import read_session
    from workbench.widgets.replay_app import ReplayApp

    secret = "wire-secret-0123456789"
    server = McpServerConfig(
        name="toolbox", command=tuple(shlex.split(TOOLBOX)), env={"TOOLBOX_TOKEN": secret}
    )
    scenario = Scenario.model_validate(
        {
            "name": "wire",
            "turns": [calls(("toolbox__fail", {"reason": f"x {secret}"})), {"text": "done"}],
        }
    )
    path = tmp_path / "run.jsonl"
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path / "ws",
            tools=[],
            approve="all",
            mcp_servers=[server],
            session=path,
            pace=math.inf,
        )
    )
    assert runtime.mcp is not None
    async with runtime.mcp.attach(runtime.agent):
        live = [e.summary for e in runtime.mcp.connections[0].wire.entries]
        assert not path.exists()  # the start's messages wait for a run
        await runtime.agent.prompt("go")
    session = read_session(path)
    events = session.events
    wire = [e for e in events if e.type == "mcp_wire"]
    summaries = [e.summary for e in wire]
    assert summaries[: len(live)] == live  # the start's messages, in order, first
    assert summaries[0].startswith("initialize #") and wire[0].outgoing
    assert any(s.startswith("tools/call fail #") for s in summaries)
    assert any(s.startswith("result #") and "of tools/call" in s for s in summaries)
    first_run = next(i for i, e in enumerate(events) if e.type == "agent_start")
    assert events.index(wire[0]) > first_run
    assert all(secret not in e.text for e in wire)  # masked as the live view masks it
    call = next(e for e in wire if e.summary.startswith("tools/call fail #"))
    assert "[REDACTED" in call.text

    app = ReplayApp(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, McpWireScreen))
        screen = app.screen
        assert isinstance(screen, McpWireScreen)
        assert [e.summary for _, e in screen.rows] == summaries
        screen.query_one("#wire-filter", Input).value = "server:toolbox method:tools/call →"
        await wait_for(pilot, lambda: len(screen.rows) == 1)
        shown = str(screen.query_one("#wire-message", Static).render())
        assert '"name": "fail"' in shown and secret not in shown  # whole, indented
        screen.query_one("#wire-filter", Input).value = "received initialize"
        await wait_for(pilot, lambda: len(screen.rows) == 1)
        assert screen.rows[0][1].summary.startswith("result #") and "of initialize" in (
            screen.rows[0][1].summary
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, McpWireScreen))
        app.goto(first_run)  # before the first run: nothing recorded yet
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, McpWireScreen))
        assert app.screen.rows == []
