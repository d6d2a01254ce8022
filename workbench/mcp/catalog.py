"""A server's resources, resource templates and prompts: listing, reading, getting.

`Catalog` holds what a server's `resources/list`, `resources/templates/list` and
`prompts/list` returned (every page), listed when the server is ready and again when
it sends `notifications/resources/list_changed` or `notifications/prompts/list_changed`.
A list the server refuses costs only that list: the reason is kept in `problems`.

`read_resource` and `get_prompt` return a `Reading`: what the server sent, as the
runtime's content blocks (text bounded like a tool result, see
`workbench.agent.result_limits`), with a heading that says where it came from. A
`Reading` can be attached to the next message (`attached_message`): the model gets
the heading and the blocks as they are, in the user message, before what was typed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import mcp_types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from pydantic import ValidationError

from workbench.agent.result_limits import limit_text
from workbench.agent.types import TextContent, UserContent, UserMessage
from workbench.mcp.content import map_content
from workbench.mcp.failures import McpCallError, describe, first_line
from workbench.mcp.listing import all_pages

REQUEST_TIMEOUT = 60.0
"""How long a read or a prompt may take before it fails (a person is waiting)."""

T = TypeVar("T")


@dataclass
class Catalog:
    """What one server offers besides tools."""

    resources: list[mcp_types.Resource] = field(default_factory=list)
    templates: list[mcp_types.ResourceTemplate] = field(default_factory=list)
    prompts: list[mcp_types.Prompt] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why a list could not be had, one line each (the latest listing's)."""

    async def load(self, session: ClientSession, capabilities: Any, kinds: Sequence[str]) -> None:
        """List `kinds` ("resources", "prompts") that the server's capabilities offer."""
        for kind in kinds:
            if getattr(capabilities, kind, None) is None:
                continue
            self.problems = [p for p in self.problems if not p.startswith(f"{kind}/")]
            if kind == "resources":
                self.resources = await self._list(session.list_resources, "resources")
                self.templates = await self._list(
                    session.list_resource_templates, "resource_templates"
                )
            else:
                self.prompts = await self._list(session.list_prompts, "prompts")

    async def _list(self, fetch: Callable[..., Awaitable[Any]], field_name: str) -> list[Any]:
        method = {"resource_templates": "resources/templates"}.get(field_name, field_name)
        try:
            return await all_pages(fetch, field_name, self.problems.append)
        except MCPError as exc:
            why = f"error {exc.error.code}: {exc.error.message}"
        except ValidationError as exc:
            why = f"an invalid answer: {first_line(str(exc))}"
        self.problems.append(f"{method}/list failed with {why}")
        return []

    def clear(self) -> None:
        self.resources, self.templates, self.prompts, self.problems = [], [], [], []


@dataclass
class Reading:
    """A resource's contents or a prompt's messages, as the model would get them."""

    heading: str
    """Where it came from: `MCP resource URI from server NAME`, `MCP prompt ...`."""
    content: list[UserContent]

    def text(self) -> str:
        """Everything in it as text (images as a line), for the screen."""
        parts = [self.heading]
        for block in self.content:
            if isinstance(block, TextContent):
                parts.append(block.text)
            else:
                parts.append(f"[image {block.mime_type}, {len(block.data)} base64 chars]")
        return "\n".join(parts)


def template_variables(template: str) -> list[str]:
    """The variables of an RFC 6570 URI template (`file:///{path}` has `path`)."""
    return UriTemplate.parse(template).variable_names


def expand_template(template: str, values: dict[str, str]) -> str:
    """The URI `template` names with `values` filled in (percent-encoded as RFC 6570 says)."""
    return UriTemplate.parse(template).expand(values)


async def ask(
    server: str,
    what: str,
    call: Callable[[], Awaitable[T]],
    timeout: float | None = REQUEST_TIMEOUT,
) -> T:
    """`call()`, with every failure an `McpCallError` naming the server and request."""
    details = {"server": server, "request": what}
    try:
        with anyio.fail_after(timeout):
            return await call()
    except TimeoutError:
        why = f"did not answer {what} within {timeout:g}s"
    except MCPError as exc:
        why = f"answered {what} with error {exc.error.code}: {exc.error.message}"
        details["code"] = str(exc.error.code)
    except ValidationError as exc:
        why = f"answered {what} with an invalid result: {first_line(str(exc))}"
    except Exception as exc:  # noqa: BLE001 - the SDK raises RuntimeError and others
        why = f"failed on {what}: {describe(exc)}"
    raise McpCallError(f"MCP server {server} {why}", details)


def bounded(blocks: list[UserContent], what: str) -> list[UserContent]:
    """`blocks` with every text held to the bound of a tool result."""
    return [
        TextContent(text=limit_text(b.text, what)) if isinstance(b, TextContent) else b
        for b in blocks
    ]


def resource_reading(server: str, uri: str, result: mcp_types.ReadResourceResult) -> Reading:
    blocks: list[UserContent] = []
    for contents in result.contents:
        blocks += map_content(mcp_types.EmbeddedResource(type="resource", resource=contents))
    if not blocks:
        blocks = [TextContent(text="(the resource is empty)")]
    return Reading(f"[MCP resource {uri} from server {server}]", bounded(blocks, "this resource"))


def prompt_reading(
    server: str, name: str, arguments: dict[str, str], result: mcp_types.GetPromptResult
) -> Reading:
    given = f" with {json.dumps(arguments, ensure_ascii=False)}" if arguments else ""
    heading = f"[MCP prompt {name}{given} from server {server}]"
    if result.description:
        heading += f"\n{result.description}"
    blocks: list[UserContent] = []
    for message in result.messages:
        mapped = map_content(message.content)
        if mapped and isinstance(mapped[0], TextContent):
            mapped[0] = TextContent(text=f"{message.role}: {mapped[0].text}")
        else:
            mapped.insert(0, TextContent(text=f"{message.role}:"))
        blocks += mapped
    return Reading(heading, bounded(blocks, "this prompt"))


def attached_message(readings: Sequence[Reading], text: str) -> UserMessage:
    """The user message that carries `readings` and then `text`: for each reading a
    text block with its heading, then its blocks; the typed text comes last."""
    content: list[UserContent] = []
    for reading in readings:
        content.append(TextContent(text=reading.heading))
        content += reading.content
    content.append(TextContent(text=text))
    return UserMessage(content=content)
