"""`sanitize.literal` and `json_text`: untrusted text made visible, JSON parsed without recursion."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.json_text import JsonDepthError, depth, escape_chars, loads, normal, utf8
from workbench.sanitize import UNSAFE, literal, one_line


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]52;c;eA==\x07", "␛]52;c;eA==␇"),  # OSC 52: set the clipboard
        ("\x1b]2;title\x1b\\", "␛]2;title␛\\"),  # OSC 2: set the window title
        ("\x9b2J\x9d0;x\x9c", "\\x9b2J\\x9d0;x\\x9c"),  # 8-bit CSI, OSC, ST
        ("a\x7fb\x00\r", "a\\x7fb␀␍"),
        ("\u202eevil\u202c", "⟨U+202E⟩evil⟨U+202C⟩"),  # bidi override
        (
            "\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
            "⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩",
        ),
        ("a\u200bb\u200c\u200d\u2060\ufeff", "a⟨U+200B⟩b⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩"),
        ("name\udcff\ud800", "name⟨U+DCFF⟩⟨U+D800⟩"),  # not UTF-8, lone surrogate
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("ünïcode ✓ 日本", "ünïcode ✓ 日本"),
    ],
)
def test_literal_shows_every_unsafe_character(raw: str, shown: str) -> None:
    assert literal(raw) == shown
    assert UNSAFE.search(literal(raw)) is None
    shown.encode("utf-8")  # always writable


def test_one_line_is_literal_too() -> None:
    assert one_line("\n  a\u202eb\x1b[2J  \nnext") == "a⟨U+202E⟩b␛[2J"


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ("1", 0),
        ("{}", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[[", "]"]', 1),
        ('{"k\\"[[": "\\\\"}', 1),
        ("[" * 50 + "]" * 50, 50),
    ],
)
def test_depth_ignores_brackets_in_strings(text: str, levels: int) -> None:
    assert depth(text) == levels


def test_loads_refuses_deep_json_without_recursing() -> None:
    assert loads("[" * 100 + "]" * 100) is not None
    for levels in (101, 10_000, 1_000_000):
        with pytest.raises(JsonDepthError, match=f"nested {levels} levels deep"):
            loads("[" * levels + "]" * levels)
    assert normal("[" * 10_000 + "]" * 10_000) == "[" * 10_000 + "]" * 10_000  # not JSON to us


@given(st.text())
def test_utf8_round_trips_any_string(text: str) -> None:
    encoded = utf8(json.dumps(text, ensure_ascii=False))
    assert json.loads(encoded) == text
    assert (
        UNSAFE.search(escape := escape_chars(json.dumps(text, ensure_ascii=False), UNSAFE)) is None
    )
    assert json.loads(escape) == text


def test_a_request_body_is_always_utf8() -> None:
    from workbench.agent import UserMessage
    from workbench.agent.config import LlmContext
    from workbench.providers.openai_messages import build_request_body
    from workbench.providers.settings import OpenAISettings

    text = "files: bytes\udcff\udcfename.txt, a\ud800"  # what list_directory saw
    context = LlmContext(system_prompt="s", messages=[UserMessage(content=text)], tools=[])
    body, notes = build_request_body("m", context, OpenAISettings(model="m"))
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # what the HTTP client does
    assert body["messages"][1]["content"] == "files: bytes\ufffd\ufffdname.txt, a\ufffd"
    assert notes == [
        "3 lone surrogate(s) (text that is not UTF-8, such as a file name's bytes) sent as "
        "U+FFFD: a request body must be UTF-8"
    ]
    clean = LlmContext(system_prompt="s", messages=[UserMessage(content="plain")], tools=[])
    assert build_request_body("m", clean, OpenAISettings(model="m"))[1] == []


def test_every_unsafe_character_is_unprintable() -> None:
    """`safe` trusts `str.isprintable` first: no unsafe character may pass it."""
    assert not [c for c in map(chr, range(0x110000)) if UNSAFE.match(c) and c.isprintable()]
