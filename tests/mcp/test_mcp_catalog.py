"""A server's resources, resource templates and prompts: listed (every page), read,
filled in, listed again when the server says they changed, bounded like tool results,
and attached to a message the model receives."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest

from tests.mcp.helpers import calls, mcp_run
from workbench.agent import ImageContent, TextContent
from workbench.agent.result_limits import MAX_TEXT_CHARS
from workbench.mcp.catalog import (
    Catalog,
    attached_message,
    expand_template,
    prompt_reading,
    resource_reading,
    template_variables,
)
from workbench.mcp.failures import McpCallError


async def test_resources_templates_and_prompts_are_listed() -> None:
    async with mcp_run() as run:
        catalog = run.hub.connection("toolbox").catalog
        assert {r.uri: r.name for r in catalog.resources} == {
            "note://readme": "readme",
            "note://pixel": "pixel",
        }
        assert [t.uri_template for t in catalog.templates] == ["note://by-name/{name}"]
        prompts = {p.name: p for p in catalog.prompts}
        assert sorted(prompts) == ["greet", "review"]
        assert [(a.name, a.required) for a in prompts["review"].arguments or []] == [
            ("code", True),
            ("focus", False),
        ]
        assert catalog.problems == []


async def test_a_resource_is_read_as_content_blocks() -> None:
    async with mcp_run() as run:
        connection = run.hub.connection("toolbox")
        text = await connection.read_resource("note://readme")
        assert text.heading == "[MCP resource note://readme from server toolbox]"
        assert [b.text for b in text.content if isinstance(b, TextContent)] == [
            "[resource note://readme (text/plain)]\n"
            "The toolbox has tools, resources and prompts.\nSecond line."
        ]
        image = await connection.read_resource("note://pixel")
        assert isinstance(image.content[0], ImageContent)
        assert image.content[0].mime_type == "image/png"
        with pytest.raises(McpCallError) as failed:
            await connection.read_resource("note://missing")
        assert str(failed.value).startswith(
            "MCP server toolbox answered resources/read note://missing with error"
        )


async def test_a_template_is_filled_in_and_read() -> None:
    template = "note://by-name/{name}"
    assert template_variables(template) == ["name"]
    uri = expand_template(template, {"name": "a b/c"})
    assert uri == "note://by-name/a%20b%2Fc"
    async with mcp_run() as run:
        reading = await run.hub.connection("toolbox").read_resource(
            expand_template(template, {"name": "Ann"})
        )
        assert reading.content[0].text.endswith("\na note about Ann")  # type: ignore[union-attr]


async def test_a_prompt_is_got_with_its_arguments() -> None:
    async with mcp_run() as run:
        connection = run.hub.connection("toolbox")
        reading = await connection.get_prompt("review", {"code": "x = 1", "focus": "style"})
        assert reading.heading.startswith(
            '[MCP prompt review with {"code": "x = 1", "focus": "style"} from server toolbox]'
        )
        assert [b.text for b in reading.content if isinstance(b, TextContent)] == [
            "user: Please review this code, looking for style:\nx = 1",
            "assistant: Sure: what language is it?",
        ]
        with pytest.raises(McpCallError, match="prompts/get review with error"):
            await connection.get_prompt("review", {})  # `code` is required


async def test_changed_lists_are_listed_again() -> None:
    async with mcp_run(calls(("toolbox__add_note", {}))) as run:
        catalog = run.hub.connection("toolbox").catalog
        await run.agent.prompt("go")
        assert run.result("toolbox__add_note").text == "added"
        with anyio.fail_after(5):
            while "added" not in [p.name for p in catalog.prompts] or len(catalog.resources) < 3:
                await anyio.sleep(0.02)
        assert "note://added" in [str(r.uri) for r in catalog.resources]


async def test_a_stopped_server_says_so() -> None:
    async with mcp_run() as run:
        connection = run.hub.connection("toolbox")
        connection.stop()
        await connection.wait_done()
        with pytest.raises(McpCallError, match="MCP server toolbox is not running"):
            await connection.get_prompt("greet", {})


def test_huge_contents_are_bounded_with_the_size_stated() -> None:
    text = "x" * (3 * MAX_TEXT_CHARS)
    result = mcp_types.ReadResourceResult(
        contents=[mcp_types.TextResourceContents(uri="big://one", text=text)]
    )
    block = resource_reading("s", "big://one", result).content[0]
    assert isinstance(block, TextContent)
    assert len(block.text) < MAX_TEXT_CHARS + 500
    assert f"it was {len(text) + len('[resource big://one (unknown type)]') + 1} characters" in (
        block.text
    )
    prompt = mcp_types.GetPromptResult(
        messages=[
            mcp_types.PromptMessage(
                role="user", content=mcp_types.TextContent(type="text", text=text)
            )
        ]
    )
    assert (
        "characters of this prompt left out" in prompt_reading("s", "p", {}, prompt).content[0].text
    )  # type: ignore[union-attr]


async def test_a_refused_list_costs_only_that_list() -> None:
    catalog = Catalog()
    capabilities = mcp_types.ServerCapabilities(prompts=mcp_types.PromptsCapability())

    class Refusing:
        async def list_prompts(self, params: Any = None) -> Any:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32601, message="Method not found")

    await catalog.load(Refusing(), capabilities, ("resources", "prompts"))  # type: ignore[arg-type]
    assert catalog.problems == ["prompts/list failed with error -32601: Method not found"]
    assert catalog.prompts == []


async def test_an_attached_reading_reaches_the_model() -> None:
    seen: list[Any] = []
    async with mcp_run() as run:
        provider = run.agent.stream_fn

        def spy(model: Any, context: Any, options: Any) -> Any:
            seen.append(context)
            return provider(model, context, options)

        run.agent.stream_fn = spy
        reading = await run.hub.connection("toolbox").get_prompt("greet", {})
        await run.agent.prompt(attached_message([reading], "and now?"))
    blocks = seen[0].messages[-1].content
    assert [b.text for b in blocks] == [
        "[MCP prompt greet from server toolbox]\nSay hello.",
        "user: Hello from the toolbox prompt",
        "and now?",
    ]
