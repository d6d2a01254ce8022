"""A small stdio MCP server for the tests, written with the official SDK.

Tools: a nested schema (`place_order`), a slow tool that reports progress and records
a cancellation (`slow_count`), one that fails (`fail`, an `isError` result), one that
returns an image (`snapshot`) and one an embedded resource (`read_note`), one that
answers with a JSON-RPC error (`protocol_error`) and one that dies mid-call (`crash`),
one that answers two text blocks (`two_blocks`, annotated read-only; `fail` is
annotated destructive) and one that exits while idle after answering (`exit_soon`),
one that logs (`chatty`), one that adds a tool (`grow`), one that asks for the
client's roots (`roots`), two that ask the user (`ask_contact`, a form; `ask_login`, a
URL) and one that asks the client's model (`summarize`).

Resources: `note://readme` (text), `note://pixel` (a PNG blob), the template
`note://by-name/{name}`; prompts: `review` (arguments `code`, required, and `focus`)
and `greet` (none). `add_note` adds a resource and a prompt and sends both
list_changed notifications; `link_readme` answers with a link to `note://readme`. A
server that answers garbage
is `garbage.py`: this SDK keeps a tool's stray output off the protocol stream.

Run: `python tests/mcp/servers/toolbox.py` (stdio), or with `--http PORT` for
streamable HTTP on 127.0.0.1 (`--sse PORT`: the older HTTP+SSE transport).
"""

from __future__ import annotations

import base64
import os
import sys
import threading
import time
from pathlib import Path
from typing import Literal

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, Prompt, UserMessage
from mcp.server.mcpserver.resources import TextResource
from mcp.shared.exceptions import MCPError
from mcp.types import (
    Annotations,
    Completion,
    EmbeddedResource,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

# A 1x1 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

server = MCPServer(
    "toolbox", log_level="WARNING", instructions="Place orders with place_order.\nBe polite."
)


class LineItem(BaseModel):
    sku: str = Field(min_length=3, description="Stock keeping unit")
    quantity: int = Field(ge=1)
    color: Literal["red", "green", "blue"] = "red"


class Order(BaseModel):
    customer: str
    items: list[LineItem] = Field(min_length=1)
    priority: Literal["low", "normal", "high"]


@server.tool(title="Place an order")
def place_order(order: Order, note: str | None = None) -> str:
    """Place an order for some items."""
    count = sum(item.quantity for item in order.items)
    skus = ", ".join(f"{i.sku}x{i.quantity} ({i.color})" for i in order.items)
    suffix = f" note={note}" if note else ""
    return f"order for {order.customer}: {count} items [{skus}] priority={order.priority}{suffix}"


@server.tool()
async def slow_count(n: int, delay: float, ctx: Context, marker: str | None = None) -> str:
    """Count to n, one step every `delay` seconds, reporting progress."""
    try:
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1} of {n}")
            await anyio.sleep(delay)
    except anyio.get_cancelled_exc_class():
        if marker:
            Path(marker).write_text("cancelled", encoding="utf-8")
        raise
    return f"counted to {n}"


@server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False))
def fail(reason: str) -> str:
    """Always fails with `reason` (an `isError` result)."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def protocol_error() -> str:
    """Answers with a JSON-RPC error instead of a result."""
    raise MCPError(code=-32001, message="the backend is unavailable")


@server.tool()
def snapshot() -> Image:
    """A tiny PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def read_note() -> EmbeddedResource:
    """An embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="note://one", mime_type="text/plain", text="hello note"),
    )


@server.tool()
async def crash(after: float = 0.2) -> str:
    """Dies mid-call (the process exits without answering)."""
    await anyio.sleep(after)
    print("toolbox: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
def two_blocks() -> list[TextContent]:
    """Answers with two text blocks."""
    return [
        TextContent(type="text", text="first block:"),
        TextContent(
            type="text",
            text="second",
            annotations=Annotations(audience=["user"], priority=0.9),
        ),
    ]


@server.tool()
def exit_soon(after: float = 0.2) -> str:
    """Answers, then the process exits while idle (after `after` seconds)."""

    def later() -> None:
        time.sleep(after)
        print("toolbox: exiting while idle", file=sys.stderr, flush=True)
        os._exit(4)

    threading.Thread(target=later, daemon=True).start()
    return "exiting soon"


@server.tool()
async def chatty(ctx: Context) -> str:
    """Logs two lines to the client (`notifications/message`), then answers."""
    await ctx.log("info", "starting", logger_name="chatty")
    await ctx.log("warning", {"disk": "low"})
    return "talked"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds a tool (`grown`) and tells the client its tool list changed."""

    def grown() -> str:
        """A tool added while the server runs."""
        return "grown"

    server.add_tool(grown)
    await ctx.session.send_tool_list_changed()
    return "grew"


@server.tool()
async def roots(ctx: Context) -> str:
    """Asks the client for its roots and answers with their URIs."""
    listed = await ctx.session.list_roots()
    return " ".join(str(root.uri) for root in listed.roots) or "(no roots)"


class Contact(BaseModel):
    name: str = Field(description="Who to write to")
    age: int = Field(ge=0, description="Their age")
    urgent: bool = False
    channel: Literal["mail", "phone"] = "mail"


@server.tool()
async def ask_contact(ctx: Context) -> str:
    """Asks the user for a contact (`elicitation/create`, a form) and answers with it."""
    answer = await ctx.elicit("Who should get the report?", Contact)
    if answer.action != "accept":
        return f"no contact: {answer.action}"
    return f"contact: {answer.data.model_dump_json()}"


@server.tool()
async def ask_login(ctx: Context) -> str:
    """Asks the user to visit a URL (URL-mode elicitation)."""
    answer = await ctx.elicit_url("Sign in to continue", "https://example.com/login", "e1")
    return f"login: {answer.action}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model to summarize `text` (`sampling/createMessage`)."""
    reply = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=50,
        system_prompt="Summarize in five words.",
    )
    content = reply.content
    return f"summary ({reply.model}): {getattr(content, 'text', content)}"


@server.resource("note://readme", name="readme", title="Read me", mime_type="text/plain")
def readme() -> str:
    """How to use the toolbox."""
    return "The toolbox has tools, resources and prompts.\nSecond line."


@server.resource("note://pixel", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    """A 1x1 red PNG."""
    return PNG


@server.resource("note://by-name/{name}", name="note_by_name", mime_type="text/plain")
def note_by_name(name: str) -> str:
    """A note about `name`."""
    return f"a note about {name}"


@server.completion()
async def complete(ref: object, argument: object, context: object) -> Completion | None:
    """Suggests note names for the template, and review focuses for the prompt (after
    the code is given: the context's arguments)."""
    value = str(getattr(argument, "value", ""))
    if getattr(argument, "name", "") == "name":
        return Completion(values=[n for n in ("readme", "news", "notes") if n.startswith(value)])
    if getattr(argument, "name", "") == "focus":
        given = getattr(context, "arguments", None) or {}
        choices = ["bugs", "style", "speed"] if given.get("code") else ["bugs"]
        return Completion(values=[c for c in choices if c.startswith(value)])
    return None


@server.prompt(title="Review code")
def review(code: str, focus: str = "bugs") -> list[Message]:
    """Ask for a review of `code`."""
    return [
        UserMessage(f"Please review this code, looking for {focus}:\n{code}"),
        AssistantMessage("Sure: what language is it?"),
    ]


@server.prompt()
def greet() -> str:
    """Say hello."""
    return "Hello from the toolbox prompt"


@server.tool()
def link_readme() -> list[TextContent | ResourceLink]:
    """Answers with a link to the `note://readme` resource."""
    return [
        TextContent(type="text", text="see the readme"),
        ResourceLink(type="resource_link", uri="note://readme", name="readme"),
    ]


@server.tool()
async def add_note(ctx: Context) -> str:
    """Adds a resource (`note://added`) and a prompt (`added`), then says both lists changed."""
    server.add_resource(TextResource(uri="note://added", name="added", text="added later"))
    server.add_prompt(Prompt.from_function(lambda: "an added prompt", name="added"))
    await ctx.session.send_resource_list_changed()
    await ctx.session.send_prompt_list_changed()
    return "added"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
