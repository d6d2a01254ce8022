"""JSON text from untrusted sources: parsed with a depth limit, written so it always encodes.

Python's `json` recurses once per nesting level, so `[[[[...]]]]` 100,000 levels
deep raises `RecursionError` (not a `ValueError`) in whatever parses it, and data a
few hundred levels deep already breaks pydantic's serializer. `loads` measures the
nesting before parsing (without recursing) and refuses deeper text with a
`JsonDepthError`, a `ValueError` naming the depth, so callers that handle bad JSON
handle this too: a tool call's arguments fail that call, a session line is skipped.

A `str` can hold a lone surrogate (a model's JSON `"\\ud800"`, a file name that is
not UTF-8 decoded with `surrogateescape`), which no UTF-8 file can hold. `utf8`
writes such a character as its JSON escape, which reads back as the same string.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 100
"""Nesting levels a tool call's arguments may have (real ones have a handful)."""
LINE_DEPTH = MAX_DEPTH + 20
"""Nesting levels a session line may have: arguments inside an event's envelope."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonDepthError(ValueError):
    """JSON text nested deeper than the limit; `depth` is how deep it goes."""

    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"JSON nested {depth} levels deep (the limit is {limit})")
        self.depth = depth
        self.limit = limit


def depth(text: str) -> int:
    """How deeply the arrays and objects of JSON `text` nest (0 for a scalar).

    Linear in the text and without recursion: brackets inside strings are dropped,
    then the running sum of opening (+1) and closing (-1) brackets peaks at the depth.
    """
    if text.count("[") + text.count("{") <= 1:
        return int("[" in text or "{" in text)
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def loads(text: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """`json.loads` that raises `JsonDepthError` (a ValueError) for text nested deeper
    than `limit`, instead of `RecursionError` or data nothing downstream can handle."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if text.count("[") + text.count("{") > limit:
        found = depth(text)
        if found > limit:
            raise JsonDepthError(found, limit)
    return json.loads(text)


def normal(text: str) -> str:
    """JSON text in one canonical form (keys sorted), or the text itself if it is not JSON:
    tells whether a raw argument string says the same as the parsed arguments."""
    try:
        return json.dumps(loads(text), sort_keys=True)
    except ValueError:
        return text


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def utf8(text: str) -> bytes:
    """`text` (JSON) as UTF-8, any lone surrogate written as its `\\uXXXX` escape.

    In JSON text a surrogate can only stand inside a string, where the escape means
    the same character: the JSON reads back exactly as it was.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape, text).encode("utf-8")


def escape_chars(text: str, pattern: re.Pattern[str]) -> str:
    """JSON `text` with every character `pattern` matches written as its `\\uXXXX` escape
    (the same JSON value, with nothing invisible or unprintable left in it)."""
    return pattern.sub(_escape, text)


def without_surrogates(data: Any) -> tuple[Any, int]:
    """`data` (JSON values) with every lone surrogate replaced by U+FFFD, and how many.

    For a body sent over the wire, which must be UTF-8: a server cannot be handed
    the escape `utf8` writes to files (many reject it). Unchanged parts are the
    same objects, so text without surrogates costs one regex search a string.
    """
    if isinstance(data, str):
        count = len(_SURROGATE.findall(data))
        return (_SURROGATE.sub("\ufffd", data), count) if count else (data, 0)
    if isinstance(data, dict):
        total, out = 0, {}
        for key, value in data.items():
            (key, a), (value, b) = without_surrogates(key), without_surrogates(value)
            out[key] = value
            total += a + b
        return (out, total) if total else (data, 0)
    if isinstance(data, list):
        pairs = [without_surrogates(item) for item in data]
        total = sum(count for _, count in pairs)
        return ([item for item, _ in pairs], total) if total else (data, 0)
    return data, 0
