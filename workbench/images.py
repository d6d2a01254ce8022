"""Images in tool results: what they are (type, size, pixel dimensions) and saving them.

A result's image is base64 text from a tool or an MCP server, with a MIME type the
sender chose. What is shown and how a saved file is named come from the bytes
themselves (their PNG, JPEG, GIF or WebP header), never from that MIME type alone:
a claimed `image/png` that is not one says so, and its file gets `.bin`.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.agent.types import ImageContent

_SUFFIX = {"png": ".png", "jpeg": ".jpg", "gif": ".gif", "webp": ".webp"}
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
"""JPEG start-of-frame markers (they hold the dimensions)."""


@dataclass(frozen=True)
class ImageFacts:
    mime_type: str
    """As the sender claimed it."""
    size: int | None
    """Decoded bytes; None when the data is not valid base64."""
    kind: str | None = None
    """"png", "jpeg", "gif" or "webp", read from the bytes; None: not one of those."""
    width: int | None = None
    height: int | None = None

    def describe(self) -> str:
        """`image/png, 1.2 KB, 64×48 px` (or what is wrong with it)."""
        if self.size is None:
            return f"{self.mime_type}, not valid base64"
        parts = [self.mime_type, _bytes(self.size)]
        if self.width is not None and self.height is not None:
            parts.append(f"{self.width}×{self.height} px")
        if self.kind is None:
            parts.append("not a PNG, JPEG, GIF or WebP")
        elif self.mime_type.lower() not in (f"image/{self.kind}", "image/jpg"):
            parts.append(f"the bytes are {self.kind.upper()}")
        return ", ".join(parts)


def decode(block: ImageContent) -> bytes | None:
    """The image's bytes, or None when its data is not valid base64."""
    try:
        return base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_facts(block: ImageContent) -> ImageFacts:
    data = decode(block)
    if data is None:
        return ImageFacts(block.mime_type, None)
    kind, width, height = read_header(data)
    return ImageFacts(block.mime_type, len(data), kind, width, height)


def read_header(data: bytes) -> tuple[str | None, int | None, int | None]:
    """(kind, width, height) from an image's first bytes; dimensions None if not found."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return "png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "gif", width, height
    if data.startswith(b"\xff\xd8"):
        return ("jpeg", *_jpeg_size(data))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("webp", *_webp_size(data))
    return None, None, None


def _jpeg_size(data: bytes) -> tuple[int | None, int | None]:
    at = 2
    while at + 9 <= len(data):  # each segment: FF, marker, 2-byte length (linear walk)
        if data[at] != 0xFF:
            return None, None
        marker = data[at + 1]
        if marker == 0xFF:
            at += 1
            continue
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if length < 2:
            return None, None
        at += 2 + length
    return None, None


def _webp_size(data: bytes) -> tuple[int | None, int | None]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None, None


def _bytes(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def save_images(blocks: Sequence[ImageContent], target: Path, stem: str) -> list[Path]:
    """Write each image's bytes under `target` (a folder, made if missing), named
    `STEM-N.EXT` after what the bytes are; one image may instead go to `target`
    itself when that names a file (has a suffix). Existing files are not overwritten
    (a number is added). `stem` is reduced to safe characters: it comes from a call
    id the model chose. Images that are not valid base64 are skipped.

    Raises:
        OSError: the folder or a file could not be written.
    """
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip("._")[:60] or "image"
    decoded = [(data, read_header(data)[0]) for data in map(decode, blocks) if data is not None]
    if len(decoded) == 1 and target.suffix and not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        paths = [_free(target)]
    else:
        target.mkdir(parents=True, exist_ok=True)
        paths = []
        for n, (_, kind) in enumerate(decoded, 1):
            name = f"{stem}-{n}{_SUFFIX.get(kind or '', '.bin')}"
            paths.append(_free(target / name, taken=paths))
    for path, (data, _) in zip(paths, decoded, strict=True):
        with path.open("xb") as out:  # never overwrite, even if a file appeared meanwhile
            out.write(data)
    return paths


def _free(path: Path, taken: Sequence[Path] = ()) -> Path:
    """`path`, or `NAME-2.EXT`, `NAME-3.EXT`... when it exists already."""
    candidate, n = path, 1
    while candidate.exists() or candidate in taken:
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate
