"""How a server's resources and prompts look (F7, o) once a resource has been read,
and the form for a prompt's arguments; from a fixed catalog, no server."""

from __future__ import annotations

from typing import Any

import mcp_types
from textual.app import App
from textual.widgets import Static

from tests.widgets.helpers import wait_for
from workbench.agent import TextContent
from workbench.mcp.catalog import Catalog, Reading
from workbench.widgets.mcp_catalog import ArgumentsModal, McpCatalogScreen


class Server:
    name = "toolbox"

    def __init__(self) -> None:
        self.catalog = Catalog(
            resources=[
                mcp_types.Resource(
                    uri="note://readme",
                    name="readme",
                    title="Read me",
                    mime_type="text/plain",
                    description="How to use the toolbox.",
                ),
                mcp_types.Resource(uri="note://pixel", name="pixel", mime_type="image/png"),
            ],
            templates=[
                mcp_types.ResourceTemplate(
                    uri_template="note://by-name/{name}", name="note_by_name"
                )
            ],
            prompts=[
                mcp_types.Prompt(
                    name="review",
                    title="Review code",
                    arguments=[
                        mcp_types.PromptArgument(
                            name="code", description="The code", required=True
                        ),
                        mcp_types.PromptArgument(name="focus", description="What to look for"),
                    ],
                )
            ],
        )
        self.on_updated: list[Any] = []
        self.updates: dict[str, int] = {}

    async def complete(self, *_args: Any) -> list[str]:
        return []

    async def read_resource(self, uri: str) -> Reading:
        return Reading(
            f"[MCP resource {uri} from server toolbox]",
            [
                TextContent(
                    text=f"[resource {uri} (text/plain)]\n"
                    "The toolbox has tools, resources and prompts."
                )
            ],
        )


class Host(App[None]):
    def on_mount(self) -> None:
        self.push_screen(McpCatalogScreen(Server(), lambda r: 1, lambda: 0))


def test_a_read_resource(snap_compare: Any) -> None:
    async def read(pilot: Any) -> None:
        await pilot.pause()
        await pilot.press("enter")
        reading = pilot.app.screen.query_one("#catalog-reading", Static)
        await wait_for(pilot, lambda: "attaches this" in str(reading.render()))

    assert snap_compare(Host(), terminal_size=(100, 24), run_before=read)


def test_a_prompts_arguments(snap_compare: Any) -> None:
    async def fill(pilot: Any) -> None:
        await pilot.pause()
        await pilot.press("down", "down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ArgumentsModal))
        await pilot.press("tab", "s", "t", "y", "l", "e", "ctrl+y")  # no `code`: it says so
        await pilot.pause()

    assert snap_compare(Host(), terminal_size=(100, 24), run_before=fill)
