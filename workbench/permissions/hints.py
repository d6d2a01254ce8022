"""What a tool's origin says about it, and how far the gate believes it.

MCP tools carry annotations: `readOnlyHint`, `destructiveHint`, `idempotentHint`,
`openWorldHint`. They are the server's words, and a server is someone else's code, so
the gate uses them only in the direction that cannot let more through:

- **destructive** (`destructiveHint: true`): a rule that allows the tool only through a
  wildcard (`--allow mcp:files`, `files__*`) does not cover it; the call is asked,
  unless a rule names the tool itself. A person or an exact rule still decides.
- **read-only** (`readOnlyHint: true`): allowed by default, like the built-in readers,
  only when the user said to trust that server's hints (`trust_hints = true` in its
  config table). Otherwise the hint is only shown in the permission dialog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.permissions.patterns import CallPattern
from workbench.permissions.rules import Action, Rule


@dataclass(frozen=True)
class ToolHints:
    """A tool's annotations as its origin gave them (None: not said)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    trusted: bool = False
    """The user trusts the origin's hints (`trust_hints = true`)."""
    origin: str = ""
    """Who said so, e.g. `mcp:files`."""

    @classmethod
    def from_mcp(cls, annotations: Any, origin: str, trusted: bool) -> ToolHints | None:
        """The hints of an MCP `ToolAnnotations` (None when it has none)."""
        if annotations is None:
            return None
        return cls(
            read_only=annotations.read_only_hint,
            destructive=annotations.destructive_hint,
            idempotent=annotations.idempotent_hint,
            open_world=annotations.open_world_hint,
            trusted=trusted,
            origin=origin,
        )

    def words(self) -> list[str]:
        """The hints that are set, in words: `read-only`, `destructive`, ..."""
        named = (
            (self.read_only, "read-only"),
            (self.destructive, "destructive"),
            (self.idempotent, "idempotent"),
            (self.open_world, "open world"),
        )
        return [word if value else f"not {word}" for value, word in named if value is not None]


def apply_hints(
    tool_name: str, rule: Rule | None, action: Action, hints: ToolHints | None
) -> tuple[Rule | None, Action]:
    """The deciding rule and action once `hints` are taken into account (see above)."""
    if hints is None:
        return rule, action
    if action == "allow" and hints.destructive and rule is not None:
        if rule.pattern.exact_tool != tool_name:  # allowed only through a wildcard
            return None, "ask"
    default_ask = rule is None or (rule.is_default and action == "ask")
    if default_ask and hints.trusted and hints.read_only and not hints.destructive:
        source = f"readOnlyHint of {hints.origin} (trust_hints)"
        return Rule(CallPattern(tool_name), "allow", source), "allow"
    return rule, action
