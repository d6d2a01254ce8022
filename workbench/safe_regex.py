"""Regular expressions from untrusted sources, matched under a time bound.

A model's `search_files` pattern and an MCP server's JSON Schema `pattern` are
written by someone else. Python's `re` backtracks without limit, so one pattern
such as `(a|aa)+$` can hold a thread (and the GIL) for minutes. Every such pattern
is matched here, with the `regex` package and its `timeout=`:

- it takes Python's syntax, so `search_files` patterns mean what they meant with
  `re` (RE2 would refuse backreferences and lookarounds, which models and JSON
  Schemas written for ECMA-262 both use);
- its `timeout=` stops a match from inside the matcher, and `concurrent=True`
  releases the GIL while it runs, so the app stays responsive meanwhile.

A match that runs out of time raises `RegexTimeout`, whose message says which
pattern was too slow: the caller turns it into that one call's error.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import regex

MATCH_TIMEOUT = 1.0
"""Seconds one match (one line, one JSON value) may take. `regex` counts CPU time, so on
a busy machine the wall time can be longer; a `Budget`'s total counts wall time."""


class RegexTimeout(ValueError):
    """A pattern took longer than its time bound."""


class RegexSyntaxError(ValueError):
    """A pattern that does not compile."""


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, ignore_case: bool = False) -> regex.Pattern[str]:
    """`pattern` compiled (cached), or `RegexSyntaxError` with the reason."""
    flags = regex.IGNORECASE if ignore_case else 0
    try:
        return regex.compile(pattern, flags | regex.VERSION0)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise RegexSyntaxError(f"Invalid regular expression {pattern!r}: {exc}") from None


class Budget:
    """A time allowance shared by many matches (one search over many lines).

    Args:
        total: seconds all matches together may take.
        per_match: seconds one match may take (at most what is left of `total`;
            default `MATCH_TIMEOUT`).
        unit: what one match is over, for the message ("line", "value").
    """

    __slots__ = ("deadline", "per_match", "total", "unit")

    def __init__(self, total: float, per_match: float | None = None, unit: str = "line") -> None:
        self.total = total
        self.per_match = MATCH_TIMEOUT if per_match is None else per_match
        self.unit = unit
        self.deadline = time.monotonic() + total

    def search(self, compiled: regex.Pattern[str], text: str) -> Any:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RegexTimeout(_too_slow(compiled.pattern, self.total, "in all"))
        limit = min(self.per_match, left)
        try:
            return compiled.search(text, timeout=limit, concurrent=True)
        except TimeoutError:
            if limit < self.per_match:
                raise RegexTimeout(_too_slow(compiled.pattern, self.total, "in all")) from None
            raise RegexTimeout(_too_slow(compiled.pattern, limit, f"on one {self.unit}")) from None


def search(pattern: str, text: str, timeout: float | None = None) -> Any:
    """`re.search(pattern, text)` under a time bound (default `MATCH_TIMEOUT`)."""
    timeout = MATCH_TIMEOUT if timeout is None else timeout
    compiled = compile_pattern(pattern)
    try:
        return compiled.search(text, timeout=timeout, concurrent=True)
    except TimeoutError:
        raise RegexTimeout(_too_slow(pattern, timeout, "on one value")) from None


def _too_slow(pattern: str, seconds: float, where: str) -> str:
    return (
        f"Regular expression {pattern!r} took longer than {seconds:g}s {where} and was "
        "stopped: it backtracks too much (nested repetition such as (a+)+ or (a|aa)+). "
        "Simplify the pattern."
    )
