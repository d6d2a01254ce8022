"""JSON Schema keywords that match regexes, under `workbench.safe_regex`'s time bound.

An MCP server writes its tools' schemas, so a schema's `"pattern": "^(a|aa)+$"`
is untrusted: `jsonschema` would match it with `re`, without limit. `with_safe_patterns`
extends a validator class so `pattern`, `patternProperties` and `additionalProperties`
(which consults `patternProperties`) match through the bounded helper; a pattern
that runs out of time raises `RegexTimeout`, which fails that one call's validation.
Within `time_bound()`, all matches of one validation share one time allowance, so
many patterned fields cannot add up to a long freeze.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

from workbench.safe_regex import Budget, compile_pattern
from workbench.safe_regex import search as search_once

SCHEMA_TIME_LIMIT = 2.0
"""Seconds of pattern matching one validation (all of a call's arguments) may take."""

_budget: ContextVar[Budget | None] = ContextVar("schema_regex_budget", default=None)


@contextmanager
def time_bound(total: float | None = None) -> Iterator[None]:
    """Validations inside share `total` seconds of matching (default `SCHEMA_TIME_LIMIT`;
    each match is bounded anyway)."""
    limit = SCHEMA_TIME_LIMIT if total is None else total
    token = _budget.set(Budget(limit, unit="value"))
    try:
        yield
    finally:
        _budget.reset(token)


def search(pattern: str, text: str) -> Any:
    budget = _budget.get()
    if budget is None:
        return search_once(pattern, text)
    return budget.search(compile_pattern(pattern), text)


@cache
def with_safe_patterns(cls: Any) -> Any:
    """`cls` (a jsonschema validator class) with the three regex keywords bounded."""
    from jsonschema import validators  # type: ignore[import-untyped]

    return validators.extend(
        cls,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    from jsonschema import ValidationError
    from jsonschema._utils import extras_msg  # type: ignore[import-untyped]

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(search(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            error = "Additional properties are not allowed (%s %s unexpected)"
            yield ValidationError(error % extras_msg(sorted(extras, key=str)))
