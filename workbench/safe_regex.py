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
"""Seconds one match (one line, one JSON value) may take."""


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
        per_match: seconds one match may take (at most what is left of `total`).
    """

    __slots__ = ("deadline", "per_match", "total")

    def __init__(self, total: float, per_match: float = MATCH_TIMEOUT) -> None:
        self.total = total
        self.per_match = per_match
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
            raise RegexTimeout(_too_slow(compiled.pattern, limit, "on one line")) from None


def search(pattern: str, text: str, timeout: float = MATCH_TIMEOUT) -> Any:
    """`re.search(pattern, text)` under a time bound (`RegexTimeout` past it)."""
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
