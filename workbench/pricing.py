"""What a run cost: a price table (per model id or glob pattern) and token usage.

Prices are US dollars per million tokens: `input` (uncached prompt tokens), `output`
and `cached` (prompt tokens the server read from its cache; defaults to `input`).
The config file's `[prices."PATTERN"]` tables come first, then a small built-in
table for common OpenAI models, dated `BUILTIN_AS_OF` (prices change: override them
in the config file). A model no table names has no price, and its cost is "unknown"
(None), never a guess. The scripted model sends nothing, so it costs nothing.

    [prices."gpt-4.1-mini"]
    input = 0.40
    output = 1.60
    cached = 0.10

    [prices."qwen3:*"]          # a local model: free
    input = 0
    output = 0
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workbench.agent.types import Usage
from workbench.config_file import load_config

BUILTIN_AS_OF = "2025-08"
"""When the built-in prices were copied from OpenAI's pricing page (standard tier)."""


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached: float | None = Field(default=None, ge=0)
    """Cached prompt tokens; None: charged as `input`."""

    def cost(self, usage: Usage) -> float:
        cached = self.input if self.cached is None else self.cached
        return (
            (usage.input + usage.cache_write) * self.input
            + usage.cache_read * cached
            + usage.output * self.output
        ) / 1_000_000


def _p(input: float, output: float, cached: float) -> Price:  # noqa: A002 - the field's name
    return Price(input=input, output=output, cached=cached)


BUILTIN: dict[str, Price] = {
    "gpt-5": _p(1.25, 10.00, 0.125),
    "gpt-5-mini": _p(0.25, 2.00, 0.025),
    "gpt-5-nano": _p(0.05, 0.40, 0.005),
    "gpt-4.1": _p(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "gpt-4o": _p(2.50, 10.00, 1.25),
    "gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "o3": _p(2.00, 8.00, 0.50),
    "o3-mini": _p(1.10, 4.40, 0.55),
    "o4-mini": _p(1.10, 4.40, 0.275),
}
"""OpenAI's standard-tier prices as of `BUILTIN_AS_OF`; dated snapshots of a model
(`gpt-4o-2024-08-06`) are priced as the model (see `PriceTable.price_of`)."""

FREE = Price(input=0, output=0, cached=0)
_DATED = re.compile(r"^(.+)-\d{4}-\d{2}-\d{2}$")


@dataclass
class PriceTable:
    """Looks a model up: the configured table first, then the built-in one."""

    configured: dict[str, Price] = field(default_factory=dict)
    builtin: dict[str, Price] = field(default_factory=lambda: dict(BUILTIN))
    _found: dict[str, Price | None] = field(default_factory=dict, repr=False)

    def price_of(self, model: str, provider: str = "") -> Price | None:
        """The price of `model` (None: unknown). In each table an exact id wins, then the
        longest matching glob pattern; a built-in id also prices its dated snapshots."""
        if provider == "scripted":
            return FREE
        if model not in self._found:
            self._found[model] = self._look_up(model)
        return self._found[model]

    def _look_up(self, model: str) -> Price | None:
        for table in (self.configured, self.builtin):
            if model in table:
                return table[model]
            matches = [p for p in table if any(c in p for c in "*?[") and fnmatchcase(model, p)]
            if matches:
                return table[max(matches, key=len)]
        snapshot = _undated(model)
        if snapshot != model and snapshot in self.builtin:
            return self.builtin[snapshot]
        return None

    def cost(self, model: str, usage: Usage, provider: str = "") -> float | None:
        price = self.price_of(model, provider)
        return None if price is None else price.cost(usage)

    def total(self, replies: Iterable[tuple[str, str, Usage]]) -> float | None:
        """The cost of (provider, model, usage) replies; None if any is unknown."""
        total: float | None = 0.0
        for provider, model, usage in replies:
            total = add_costs(total, self.cost(model, usage, provider))
        return total


def _undated(model: str) -> str:
    """`gpt-4o-2024-08-06` -> `gpt-4o` (OpenAI's snapshot ids end in a date)."""
    match = _DATED.match(model)
    return match.group(1) if match else model


def add_costs(a: float | None, b: float | None) -> float | None:
    """A sum of costs: unknown if either is."""
    return None if a is None or b is None else a + b


def format_cost(cost: float | None) -> str:
    """`$0.0123`, `$1.23`, `$0`, or `unknown`."""
    if cost is None:
        return "unknown"
    if cost == 0:
        return "$0"
    if cost < 0.01:
        return f"${cost:.4f}"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.3f}"


def load_prices(path: Path | None, *, required: bool = False) -> PriceTable:
    """The price table with the `[prices.*]` tables of the config file at `path`.

    Raises:
        ValueError: an unreadable file, a bad price, or (with `required`) no file.
    """
    if path is None:
        return PriceTable()
    prices = load_config(path, required=required).prices
    return PriceTable(configured=parse_prices(prices, path))


def parse_prices(raw: object, where: object = "the config file") -> dict[str, Price]:
    if not isinstance(raw, Mapping):
        raise ValueError(f'Bad [prices] in {where}: expected tables like [prices."gpt-4o"]')
    prices: dict[str, Price] = {}
    for pattern, value in raw.items():
        try:
            prices[str(pattern)] = Price.model_validate(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            field_name = ".".join(str(p) for p in err["loc"])
            field = f"{field_name}: " if field_name else ""
            raise ValueError(f"Bad price for {pattern!r} in {where}: {field}{err['msg']}") from None
    return prices
