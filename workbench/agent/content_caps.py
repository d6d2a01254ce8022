"""Caps on what a tool or a model may make the workbench hold: images, and model output.

A tool (an MCP server above all) can answer with an image of any size: a 40 MB one
once took minutes to go through and became a 56 MB line of the session file. A
model can stream reasoning without end: hundreds of megabytes of memory and session
within a minute. Each cap here gives a clear error that names it, and the run goes
on with a valid transcript:

- an image block over `max_image_bytes` (its decoded size, computed from the base64
  length without decoding it), or whose header claims more than `max_image_pixels`
  pixels, or that would take the result's images past `max_result_image_bytes`, is
  replaced by a text block saying which cap it passed (`cap_images`);
- a model reply is stopped once its text, thinking and tool-call arguments pass
  `max_turn_output_chars` characters: the loop closes the stream and ends the turn
  with an error, keeping everything that came before the delta that passed the cap
  (`workbench.agent.loop`).

The caps are settings (`[limits]` in the config file, see docs/configuration.md);
`DEFAULT_CAPS` holds the defaults.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, fields
from typing import Any

from workbench.agent.types import ImageContent, TextContent
from workbench.images import read_header

MIB = 1024 * 1024
_HEADER_BASE64 = 64 * 1024
"""Base64 characters decoded to read an image's header (a JPEG's frame header may come
after its metadata)."""


@dataclass(frozen=True)
class ContentCaps:
    """The caps on content; each one is a setting of the same name under `[limits]`."""

    max_image_bytes: int = 5 * MIB
    """Decoded bytes of one image block (the largest most model APIs accept)."""
    max_result_image_bytes: int = 10 * MIB
    """Decoded bytes of all the images of one tool result (or update) together."""
    max_image_pixels: int = 50_000_000
    """Pixels (width times height) an image's header may claim."""
    max_turn_output_chars: int = 2_000_000
    """Characters of text, thinking and tool-call arguments in one model reply (about
    half a million tokens: more than any model's output limit)."""

    @classmethod
    def from_table(cls, table: Any, where: str = "[limits]") -> ContentCaps:
        """Caps from a config table (`{name: positive int}`); the rest default.

        Raises:
            ValueError: an unknown name, or a value that is not a positive integer.
        """
        if table is None:
            return cls()
        if not isinstance(table, dict):
            raise ValueError(f"{where} must be a table")
        known = {f.name for f in fields(cls)}
        values: dict[str, int] = {}
        for name, value in table.items():
            if name not in known:
                raise ValueError(
                    f"{where}: unknown setting {name!r} (known: {', '.join(sorted(known))})"
                )
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{where}: {name} must be a positive integer (got {value!r})")
            values[name] = value
        return cls(**values)


DEFAULT_CAPS = ContentCaps()


def base64_size(data: str) -> int:
    """The decoded size of base64 `data`, from its length and padding alone."""
    padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
    return max(0, len(data) * 3 // 4 - padding)


def claimed_pixels(data: str) -> int | None:
    """Width times height as the image's header claims them (None: no readable header)."""
    head = data[:_HEADER_BASE64]
    head = head[: len(head) - len(head) % 4]
    try:
        decoded = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return None
    _kind, width, height = read_header(decoded)
    return None if width is None or height is None else width * height


def cap_images(content: list[Any], caps: ContentCaps) -> list[Any] | None:
    """`content` with every image over a cap replaced by a text block saying so; None
    when no block had to change."""
    out: list[Any] | None = None
    total = 0
    for i, block in enumerate(content):
        if not isinstance(block, ImageContent):
            continue
        why = _over_cap(block, caps, total)
        if why is None:
            total += base64_size(block.data)
            continue
        if out is None:
            out = list(content)
        out[i] = TextContent(text=f"[image {block.mime_type} left out: {why}]")
    return out


def _over_cap(block: ImageContent, caps: ContentCaps, total: int) -> str | None:
    """Which cap `block` passes (as the error says it), or None."""
    size = base64_size(block.data)
    if size > caps.max_image_bytes:
        return (
            f"{_mb(size)}, over the cap of {_mb(caps.max_image_bytes)} per image (max_image_bytes)"
        )
    if total + size > caps.max_result_image_bytes:
        return (
            f"{_mb(size)} more would take this result's images past the cap of "
            f"{_mb(caps.max_result_image_bytes)} (max_result_image_bytes)"
        )
    pixels = claimed_pixels(block.data)
    if pixels is not None and pixels > caps.max_image_pixels:
        return (
            f"its header claims {pixels:,} pixels, over the cap of "
            f"{caps.max_image_pixels:,} (max_image_pixels)"
        )
    return None


def _mb(size: int) -> str:
    return f"{size / MIB:.1f} MB" if size >= MIB else f"{size / 1024:.1f} KB"
