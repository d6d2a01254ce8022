"""Resource subscriptions: `resources/subscribe`, each `notifications/resources/updated`
counted and passed on, and the catalog view re-reading the resource it shows."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from textual.app import App
from textual.widgets import OptionList, Static

from tests.mcp.helpers import mcp_run
from tests.widgets.helpers import wait_for
from workbench.mcp import McpServerConfig
from workbench.mcp.client import McpCallError
from workbench.widgets.mcp_catalog import McpCatalogScreen


async def wait_for_count(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while not condition():
            await anyio.sleep(0.02)


HOSTILE = McpServerConfig(
    name="hostile", command=(sys.executable, str(Path(__file__).parent / "servers" / "hostile.py"))
)


async def test_updates_of_a_subscribed_resource_are_counted_and_passed_on() -> None:
    async with mcp_run(configured=[HOSTILE]) as run:
        connection = run.hub.connection("hostile")
        seen: list[str] = []
        connection.on_updated.append(seen.append)
        await connection.subscribe("note://counter")
        assert connection.subscribed == {"note://counter"}
        await wait_for_count(lambda: len(seen) == 3)
        assert connection.updates == {"note://counter": 3}
        with pytest.raises(McpCallError, match="does not offer resource subscriptions"):
            await run.hub.connection("toolbox").subscribe("note://readme")


async def test_the_catalog_view_subscribes_and_shows_the_new_reading() -> None:
    async with mcp_run(configured=[HOSTILE], servers=[]) as run:
        connection = run.hub.connection("hostile")

        class Host(App[None]):
            def on_mount(self) -> None:
                self.push_screen(McpCatalogScreen(connection, lambda r: 1, lambda: 0))

        app = Host()
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            screen = app.screen
            await wait_for(pilot, lambda: screen.query_one(OptionList).option_count == 1)
            await pilot.press("enter")  # read it
            reading = screen.query_one("#catalog-reading", Static)
            await wait_for(pilot, lambda: "count 0" in str(reading.render()))
            await pilot.press("s")
            await wait_for(pilot, lambda: "count 3" in str(reading.render()), timeout=15)
            assert connection.updates == {"note://counter": 3}
