"""Images in tool results: type, size and pixel dimensions read from the bytes, and
saving them to files named after what the bytes are."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

from workbench.agent.types import ImageContent
from workbench.images import image_facts, read_header, save_images

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
GIF = b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 20
# A JPEG with an APP0 segment before its start-of-frame (the walk must skip it).
JPEG = (
    b"\xff\xd8"
    + b"\xff\xe0"
    + struct.pack(">H", 16)
    + b"JFIF\x00"
    + b"\x00" * 9
    + b"\xff\xc0"
    + struct.pack(">HBHH", 17, 8, 480, 640)
    + b"\x00" * 12
)


def block(data: bytes, mime: str = "image/png") -> ImageContent:
    return ImageContent(data=base64.b64encode(data).decode(), mime_type=mime)


def test_dimensions_come_from_the_png_gif_and_jpeg_headers() -> None:
    assert read_header(PNG) == ("png", 1, 1)
    assert read_header(GIF) == ("gif", 320, 200)
    assert read_header(JPEG) == ("jpeg", 640, 480)
    assert read_header(b"hello") == (None, None, None)
    assert image_facts(block(PNG)).describe() == "image/png, 70 bytes, 1×1 px"
    assert image_facts(block(JPEG, "image/jpeg")).describe().endswith("640×480 px")


def test_a_claimed_type_that_the_bytes_contradict_is_said() -> None:
    assert image_facts(block(GIF, "image/png")).describe().endswith("the bytes are GIF")
    assert image_facts(block(b"<svg/>")).describe() == (
        "image/png, 6 bytes, not a PNG, JPEG, GIF or WebP"
    )
    bad = ImageContent(data="not base64!!", mime_type="image/png")
    assert image_facts(bad).describe() == "image/png, not valid base64"


def test_saving_names_files_by_their_bytes_and_never_overwrites(tmp_path: Path) -> None:
    images = [block(PNG), block(GIF, "image/png"), block(b"zz", "image/../../x")]
    paths = save_images(images, tmp_path / "out", "../../call/1")
    assert [p.name for p in paths] == ["call_1-1.png", "call_1-2.gif", "call_1-3.bin"]
    assert all(p.parent == tmp_path / "out" for p in paths)
    assert paths[0].read_bytes() == PNG
    again = save_images(images[:1], tmp_path / "out", "call/1")
    assert again == [tmp_path / "out" / "call_1-1-2.png"]
    one = save_images([block(PNG)], tmp_path / "shot.png", "x")
    assert one == [tmp_path / "shot.png"] and one[0].read_bytes() == PNG
    invalid = ImageContent(data="%%%", mime_type="image/png")
    assert save_images([invalid], tmp_path / "none", "x") == []
