"""Globs matched without backtracking: the matcher for tool names, commands and text.

A glob is literal characters, `?` (any one character), `[...]` (one character of a
class: `[abc]`, `[a-z]`, `[!abc]` for "not these"; a `]` right after the `[` or
`[!` belongs to the class; a `[` with no class after it is a literal `[`), and `*`
(any run of characters; `**` is the same as `*`). Every element but `*` matches
exactly one character, so the glob is a row of fixed-length pieces between stars:
the first piece must sit at the start of the text, the last at its end, and each
middle piece is taken at its leftmost place after the previous one. Leftmost is
never worse for the pieces still to come, so no choice is ever undone: the work is
at most the text's length times the glob's, however many stars there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

Element = str | tuple[bool, tuple[tuple[str, str], ...]] | None
"""A literal character, a class (negated, (low, high) ranges), or None for `?`."""


class GlobError(ValueError):
    """A glob that cannot be read (a class range written backwards)."""


def _class(pattern: str, i: int) -> tuple[Element, int] | None:
    """The class starting at `pattern[i] == "["` and the index after it, or None."""
    end = pattern.find("]", i + 2)
    if end == -1 or pattern[i + 1 : end] == "!":
        return None
    body = pattern[i + 1 : end]
    negate = body.startswith("!")
    body = body[negate:]
    ranges: list[tuple[str, str]] = []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            low, high = body[j], body[j + 2]
            if low > high:
                raise GlobError(f"bad character range {low}-{high} in {pattern!r}")
            ranges.append((low, high))
            j += 3
        else:
            ranges.append((body[j], body[j]))
            j += 1
    return (negate, tuple(ranges)), end + 1


def _one(element: Element, char: str) -> bool:
    if element is None:
        return True
    if isinstance(element, str):
        return element == char
    negate, ranges = element
    return any(low <= char <= high for low, high in ranges) != negate


def _fits(piece: tuple[Element, ...], text: str, at: int) -> bool:
    return all(_one(element, text[at + k]) for k, element in enumerate(piece))


@dataclass(frozen=True)
class Glob:
    """A parsed glob; `matches` says whether it matches a whole text."""

    pieces: tuple[tuple[Element, ...], ...]
    """The runs of one-character elements between stars (one run: no star)."""

    @classmethod
    def parse(cls, pattern: str) -> Glob:
        """Read a glob (see the module docstring).

        Raises:
            GlobError: a class range written backwards (`[z-a]`).
        """
        pieces: list[tuple[Element, ...]] = []
        piece: list[Element] = []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "*":
                pieces.append(tuple(piece))
                piece = []
                i += 1
                continue
            found = _class(pattern, i) if c == "[" else None
            if found is not None:
                piece.append(found[0])
                i = found[1]
                continue
            piece.append(None if c == "?" else c)
            i += 1
        pieces.append(tuple(piece))
        return cls(tuple(pieces))

    @cached_property
    def literal(self) -> str | None:
        """The one text this glob matches when it has no wildcard (`[*]` counts as `*`)."""
        if len(self.pieces) != 1:
            return None
        out = []
        for element in self.pieces[0]:
            if isinstance(element, str):
                out.append(element)
            elif element is not None and not element[0] and len(element[1]) == 1:
                low, high = element[1][0]
                if low != high:
                    return None
                out.append(low)
            else:
                return None
        return "".join(out)

    def matches(self, text: str) -> bool:
        """Whether the glob matches all of `text`."""
        first, *rest = self.pieces
        if not rest:
            return len(text) == len(first) and _fits(first, text, 0)
        *middle, last = rest
        end = len(text) - len(last)
        if end < len(first) or not _fits(first, text, 0) or not _fits(last, text, end):
            return False
        at = len(first)
        for piece in middle:
            found = _find(piece, text, at, end)
            if found < 0:
                return False
            at = found + len(piece)
        return True


def _find(piece: tuple[Element, ...], text: str, start: int, end: int) -> int:
    """The leftmost index >= start where `piece` fits inside `text[:end]`, or -1."""
    if all(isinstance(element, str) for element in piece):
        return text.find("".join(piece), start, end)  # type: ignore[arg-type]
    for at in range(start, end - len(piece) + 1):
        if _fits(piece, text, at):
            return at
    return -1
