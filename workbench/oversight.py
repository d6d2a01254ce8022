"""How a run's tool calls are judged and paused: the options the app, headless runs and
the proxy share (`RunOptions` and `ProxyOptions` both hold them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.permissions import Policy


@dataclass(kw_only=True)
class Oversight:
    """The gate's rules and policy, and the stepper's starting state."""

    approve: Policy = "ask"
    """How "ask" rules are answered: a person ("ask"), or a headless policy."""
    rules_file: Path | None = None
    """The rules file (default: <workspace>/.workbench/rules.toml)."""
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    step: bool = False
    """Start in step mode."""
    breakpoints: list[str] = field(default_factory=list)
