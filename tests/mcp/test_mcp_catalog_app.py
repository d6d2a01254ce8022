"""Resources and prompts in the app: F7, o opens a server's catalog; Enter reads a
resource, fills a template or a prompt's arguments; a attaches what was read to the
next message, which the model then receives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types
from textual.app import App
from textual.widgets import Input, OptionList, Static

from tests.mcp.helpers import TOOLBOX, calls
from workbench.agent import TextContent
from workbench.mcp.catalog import Catalog, Reading
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions import read_session
from workbench.widgets.app import make_app
from workbench.widgets.mcp_catalog import ArgumentsModal, McpCatalogScreen


def _shown(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_read_fill_attach_and_send(tmp_path: Path) -> None:
    scenario = Scenario.model_validate({"name": "mcp", "turns": [{"text": "done"}]})
    runtime = build_runtime(
        RunOptions(scenario=scenario, workspace=tmp_path, tools=[], mcp=[TOOLBOX])
    )
    seen: list[Any] = []
    model = runtime.agent.stream_fn

    def spy(*args: Any) -> Any:
        seen.append(args[1])
        return model(*args)

    runtime.agent.stream_fn = spy
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:

        async def until(condition: Any) -> None:
            with anyio.fail_after(20):
                while not condition():
                    await pilot.pause(0.05)

        await until(lambda: app._mcp_started is not None and app._mcp_started.is_set())
        await pilot.press("f7", "o")
        await until(lambda: isinstance(app.screen, McpCatalogScreen))
        screen = app.screen
        assert isinstance(screen, McpCatalogScreen)
        items = screen.query_one(OptionList)

        async def choose(option_id: str) -> None:
            items.highlighted = items.get_option_index(option_id)
            await pilot.pause()
            await pilot.press("enter")

        await pilot.press("a")  # nothing read yet: nothing to attach
        assert app.attachments == []

        await choose("r:0")  # note://readme
        await until(lambda: screen.reading is not None)
        assert "The toolbox has tools, resources and prompts." in _shown(screen, "#catalog-reading")
        await pilot.press("a")
        assert len(app.attachments) == 1

        await choose("t:0")  # note://by-name/{name}
        await until(lambda: isinstance(app.screen, ArgumentsModal))
        app.screen.query_one("#f-0", Input).value = "Ann <b>"
        await pilot.press("ctrl+y")
        await until(lambda: "a note about Ann <b>" in _shown(screen, "#catalog-reading"))

        prompts = screen.connection.catalog.prompts
        review = next(f"p:{i}" for i, p in enumerate(prompts) if p.name == "review")
        await choose(review)
        await until(lambda: isinstance(app.screen, ArgumentsModal))
        modal = app.screen
        await pilot.press("ctrl+y")  # `code` is required: the form says so and stays
        await pilot.pause()
        assert isinstance(app.screen, ArgumentsModal)
        assert "code" in _shown(modal, "#args-error")
        modal.query_one("#f-0", Input).value = "x = 1"
        await pilot.press("ctrl+y")
        await until(lambda: "looking for bugs:\nx = 1" in _shown(screen, "#catalog-reading"))
        await pilot.press("a")
        assert len(app.attachments) == 2

        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        shown = _shown(app.prompt_bar, "#attachments")
        assert "attached: [MCP resource note://readme from server toolbox]" in shown
        assert 'attached: [MCP prompt review with {"code": "x = 1"} from server toolbox]' in shown

        app.prompt_bar.input.value = "what now?"
        app.prompt_bar.input.focus()
        await pilot.press("enter")
        await until(lambda: app.view_state.run_state == "finished")
        assert app.attachments == []
        assert not app.prompt_bar.query_one("#attachments").has_class("-shown")
    texts = [block.text for block in seen[0].messages[-1].content]
    assert texts == [
        "[MCP resource note://readme from server toolbox]",
        "[resource note://readme (text/plain)]\n"
        "The toolbox has tools, resources and prompts.\nSecond line.",
        '[MCP prompt review with {"code": "x = 1"} from server toolbox]\n'
        "Ask for a review of `code`.",
        "user: Please review this code, looking for bugs:\nx = 1",
        "assistant: Sure: what language is it?",
        "what now?",
    ]
    recorded = [
        event.message
        for path in (tmp_path / "sessions").rglob("*.jsonl")
        if path.is_file()
        for event in read_session(path).events
        if event.type == "message_end" and event.message.role == "user"
    ]
    assert [block.text for block in recorded[0].content] == texts  # the session says so too


async def test_a_resource_a_result_links_to_opens_from_the_palette(tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {
            "name": "mcp",
            "turns": [
                calls(("toolbox__link_readme", {})),
                {"text": "done"},
            ],
        }
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            allow=["mcp:toolbox"],
            mcp=[TOOLBOX],
        )
    )
    app = make_app(runtime, subtitle="test")
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(20):
            while app.view_state.run_state != "finished":
                await pilot.pause(0.05)
        await pilot.pause()
        assert app.inspector.record is not None
        assert app.inspector.record.name == "toolbox__link_readme"
        assert 'ctrl+p, "MCP resources in the selected call' in (
            app.inspector.section_text("Result")
        )
        await pilot.press("ctrl+p")
        await pilot.pause()
        for key in "MCP resources in":
            await pilot.press("space" if key == " " else key)
        with anyio.fail_after(5):
            while not app.screen.query("CommandList").first().option_count:  # type: ignore[attr-defined]
                await pilot.pause(0.05)
        await pilot.press("enter")
        with anyio.fail_after(5):
            while not isinstance(app.screen, McpCatalogScreen):
                await pilot.pause(0.05)
        screen = app.screen
        items = screen.query_one(OptionList)
        assert items.highlighted == items.get_option_index("l:0")
        assert "in the call's result" in str(items.get_option_at_index(0).prompt)
        await pilot.press("enter")
        with anyio.fail_after(10):
            while "Second line." not in _shown(screen, "#catalog-reading"):
                await pilot.pause(0.05)


class _Hostile:
    """A server whose names, descriptions and contents try markup and escapes."""

    name = "evil"

    def __init__(self) -> None:
        self.catalog = Catalog(
            resources=[
                mcp_types.Resource(
                    uri="x://[bold]1",
                    name="[red]res\x1b[31m",
                    description="[link=x]d[/link]",
                )
            ],
            templates=[mcp_types.ResourceTemplate(uri_template="x://{a}{b}", name="bad")],
            prompts=[
                mcp_types.Prompt(
                    name="p[b]",
                    arguments=[
                        mcp_types.PromptArgument(name="a b", description="[i]x", required=True),
                        mcp_types.PromptArgument(name="ok", description="\x1b]0;t\x07"),
                    ],
                )
            ],
        )
        self.asked: list[dict[str, str]] = []
        self.on_updated: list[Any] = []
        self.updates: dict[str, int] = {}

    async def complete(self, *_args: Any) -> list[str]:
        return ["[b]sugg\x1b[31m"]

    async def read_resource(self, uri: str) -> Reading:
        return Reading(
            f"[MCP resource {uri} from server evil]", [TextContent(text="[bold]x\x1b[2J")]
        )

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Reading:
        self.asked.append(arguments)
        return Reading("[MCP prompt]", [TextContent(text="user: hi")])


async def test_what_a_server_lists_and_sends_is_shown_literally() -> None:
    server = _Hostile()

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(McpCatalogScreen(server, lambda r: 1, lambda: 0))

    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, McpCatalogScreen)
        items = screen.query_one(OptionList)
        first = str(items.get_option_at_index(0).prompt)
        assert "[red]res" in first and "\x1b" not in first
        assert "[link=x]d[/link]" in _shown(screen, "#catalog-about")
        await pilot.press("enter")
        with anyio.fail_after(5):
            while "[bold]x" not in _shown(screen, "#catalog-reading"):
                await pilot.pause(0.05)
        assert "\x1b" not in _shown(screen, "#catalog-reading")
        items.highlighted = items.get_option_index("t:0")
        await pilot.pause()
        await pilot.press("enter")  # a template that is not RFC 6570: said, nothing breaks
        await pilot.pause()
        assert "Cannot fill in this template" in _shown(screen, "#catalog-reading")
        items.highlighted = items.get_option_index("p:0")
        await pilot.pause()
        await pilot.press("enter")
        with anyio.fail_after(5):
            while not isinstance(app.screen, ArgumentsModal):
                await pilot.pause(0.05)
        modal = app.screen
        labels = " ".join(str(s.render()) for s in modal.query(".label"))
        assert "[i]x" in labels and "\x1b" not in labels
        modal.query_one("#f-0", Input).value = "v"  # ids by place: "a b" is no widget id
        await pilot.press("ctrl+y")
        with anyio.fail_after(5):
            while not server.asked:
                await pilot.pause(0.05)
        assert server.asked == [{"a b": "v"}]
