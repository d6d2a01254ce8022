"""MCP tools as `AgentTool`s: names, schemas, progress, results.

An MCP tool becomes an `AgentTool` named `server__tool` (unique across servers,
and within the 64 characters model APIs accept), with `source="mcp:server"`,
its title as the label and its JSON Schema as `parameters`, so the runtime
validates its arguments like any other tool's. `execute` calls the tool through
the server's session: progress notifications become `on_update` partial results
(a growing log of progress lines), an abort cancels the request, an `isError`
result is an error result (`is_error=True`, details kept), any failure raises (the
loop makes it an error result), and the result's content is mapped to the runtime's
content types; `outputSchema` and `structuredContent` map onto the tool's
`output_schema` and the result's `structured_content` (checked by the loop). A tool
that requires task augmentation is called as a task (`workbench.mcp.tasks`): its
status lines are its live output.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

import mcp_types
from pydantic import BaseModel

from workbench.agent import AbortSignal, AgentTool, AgentToolResult, TextContent
from workbench.agent.tool import OnUpdate
from workbench.agent.types import ToolResultContent
from workbench.json_text import without_surrogates
from workbench.mcp.client import McpConnection
from workbench.mcp.content import map_content
from workbench.mcp.failures import McpCallError
from workbench.mcp.tasks import call_as_task, needs_task
from workbench.permissions.hints import ToolHints

SEPARATOR = "__"
"""Between the server's name and the tool's: `files__read_file`."""
MAX_NAME = 64
"""The longest tool name OpenAI-compatible APIs accept."""
PROGRESS_LINES = 200
"""How many progress lines an update keeps (the oldest are dropped)."""


def tool_name(server: str, tool: str) -> str:
    """`server__tool`, with characters model APIs reject replaced and the length capped."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", tool) or "tool"
    name = f"{server}{SEPARATOR}{clean}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(tool.encode()).hexdigest()[:6]
        name = f"{name[: MAX_NAME - 7]}_{digest}"
    return name


def server_tools(connection: McpConnection, taken: Iterable[str] = ()) -> list[AgentTool]:
    """The `AgentTool`s of a ready server; names in `taken` are avoided."""
    used = set(taken)
    tools = []
    for tool in connection.tools:
        name = tool_name(connection.name, tool.name)
        base, n = name, 1
        while name in used:
            n += 1
            name = f"{base[: MAX_NAME - 3]}_{n}"
        used.add(name)
        tools.append(make_tool(connection, tool, name))
    return tools


def make_tool(connection: McpConnection, tool: mcp_types.Tool, name: str) -> AgentTool:
    """One MCP tool as an `AgentTool` named `name` that calls it on `connection`."""

    async def execute(
        tool_call_id: str, params: BaseModel, signal: AbortSignal, on_update: OnUpdate
    ) -> AgentToolResult:
        arguments = params.model_dump(mode="json")
        if without_surrogates(arguments)[1]:  # approved as they are: not sent altered
            raise McpCallError(
                f"Not sent to MCP server {connection.name}: the arguments hold a lone "
                "surrogate (text that is not valid Unicode), which JSON-RPC cannot carry",
                {"server": connection.name, "tool": tool.name},
            )
        progress = ProgressLog(on_update)
        if needs_task(tool):
            result = await call_as_task(
                connection.session_for(f"tools/call {tool.name}"),
                connection.name,
                tool.name,
                arguments,
                signal=signal,
                note=progress.note,
            )
        else:
            result = await connection.call_tool(
                tool.name, arguments, signal=signal, progress=progress
            )
        content, details = map_result(connection.name, tool.name, result)
        if result.is_error and not content:
            content = [TextContent(text=f"MCP tool {tool.name} reported an error")]
        return AgentToolResult(
            content=content,
            details=details,
            is_error=bool(result.is_error),
            structured_content=result.structured_content,
        )

    annotations = tool.annotations
    label = tool.title or (annotations.title if annotations is not None else None) or tool.name
    return AgentTool(
        name=name,
        label=label,
        description=tool.description or f"{tool.name} (MCP server {connection.name})",
        parameters=dict(tool.input_schema),
        execute=execute,
        source=f"mcp:{connection.name}",
        hints=ToolHints.from_mcp(
            tool.annotations, f"mcp:{connection.name}", connection.config.trust_hints
        ),
        output_schema=dict(tool.output_schema) if tool.output_schema else None,
    )


class ProgressLog:
    """The SDK's progress callback: each notification becomes an `on_update` partial
    result holding every progress line so far (updates replace the previous one)."""

    def __init__(self, on_update: OnUpdate) -> None:
        self.on_update = on_update
        self.lines: list[str] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        line = (
            f"progress {progress:g}/{total:g} ({progress / total:.0%})"
            if total
            else (f"progress {progress:g}")
        )
        if message:
            line += f": {message}"
        self.note(line, {"progress": progress, "total": total, "message": message})

    def note(self, line: str, details: dict[str, Any] | None = None) -> None:
        """One more line of live output (a task's status, too)."""
        self.lines.append(line)
        del self.lines[:-PROGRESS_LINES]
        self.on_update(AgentToolResult.text("\n".join(self.lines), details=details or {}))


def map_result(
    server: str, tool: str, result: mcp_types.CallToolResult
) -> tuple[list[ToolResultContent], dict[str, Any]]:
    """The result's content as runtime content blocks, and details for the inspector."""
    content = [block for item in result.content for block in map_content(item)]
    details: dict[str, Any] = {"server": server, "tool": tool}
    if result.structured_content is not None:  # kept as the result's structured_content
        if not content:
            text = json.dumps(result.structured_content, ensure_ascii=False)
            content = [TextContent(text=text)]
    if result.is_error:
        details["is_error"] = True
    notes = content_annotations(result.content)
    if notes:
        details["annotations"] = notes
    named = named_resources(result.content)
    if named:
        details["resources"] = named
    return content, details


def named_resources(items: list[Any]) -> list[dict[str, Any]]:
    """The resources a result links to or embeds (`uri`, `name`, ...): the app offers
    to read them from the server."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, mcp_types.ResourceLink):
            fields = item.model_dump(mode="json", exclude_none=True)
            out.append(
                {k: fields[k] for k in ("uri", "name", "description", "mime_type") if k in fields}
            )
        elif isinstance(item, mcp_types.EmbeddedResource):
            out.append({"uri": str(item.resource.uri), "name": str(item.resource.uri)})
    return out[:50]


def content_annotations(items: list[Any]) -> list[dict[str, Any]]:
    """What the server said about each block it annotated: who it is for (`audience`),
    how much it matters (`priority`), when it changed; block numbers count from 1."""
    notes = []
    for number, item in enumerate(items, 1):
        said = getattr(item, "annotations", None)
        if said is None:
            continue
        fields = said.model_dump(mode="json", exclude_none=True, by_alias=True)
        if fields:
            notes.append({"block": number, **fields})
    return notes
