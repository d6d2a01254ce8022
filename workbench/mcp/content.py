"""MCP content blocks as the runtime's content blocks (tool results, resources, prompts)."""

from __future__ import annotations

from typing import Any

import mcp_types

from workbench.agent import ImageContent, TextContent
from workbench.agent.types import ToolResultContent


def map_content(item: Any) -> list[ToolResultContent]:
    """One MCP content block: text and images as they are, an embedded text resource as
    its text, an embedded image blob as an image; what the runtime cannot hold (audio,
    other blobs, resource links) as a line describing it."""
    if isinstance(item, mcp_types.TextContent):
        return [TextContent(text=item.text)]
    if isinstance(item, mcp_types.ImageContent):
        return [ImageContent(data=item.data, mime_type=item.mime_type)]
    if isinstance(item, mcp_types.AudioContent):
        return [TextContent(text=f"[audio {item.mime_type}, {len(item.data)} base64 chars]")]
    if isinstance(item, mcp_types.EmbeddedResource):
        resource = item.resource
        mime = resource.mime_type or "unknown type"
        if isinstance(resource, mcp_types.TextResourceContents):
            return [TextContent(text=f"[resource {resource.uri} ({mime})]\n{resource.text}")]
        if isinstance(resource, mcp_types.BlobResourceContents):
            if (resource.mime_type or "").startswith("image/"):
                return [ImageContent(data=resource.blob, mime_type=mime)]
            size = len(resource.blob)
            return [TextContent(text=f"[resource {resource.uri} ({mime}), {size} base64 chars]")]
    if isinstance(item, mcp_types.ResourceLink):
        about = f": {item.description}" if item.description else ""
        return [TextContent(text=f"[resource link {item.name} {item.uri}{about}]")]
    kind = getattr(item, "type", type(item).__name__)
    return [TextContent(text=f"[{kind} content]")]
