"""What an MCP tool's annotations say, as the permission dialog shows it, and the rule a
trusted read-only hint stands for."""

from __future__ import annotations

from mcp.types import ToolAnnotations

from workbench.permissions.hints import ToolHints, apply_hints


def test_every_annotation_is_read_and_said_in_words() -> None:
    annotations = ToolAnnotations(
        readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
    )
    hints = ToolHints.from_mcp(annotations, "mcp:files", trusted=False)
    assert hints == ToolHints(
        read_only=False, destructive=True, idempotent=True, open_world=False, origin="mcp:files"
    )
    assert hints.words() == ["not read-only", "destructive", "idempotent", "not open world"]
    other = ToolHints.from_mcp(
        ToolAnnotations(idempotentHint=False, openWorldHint=True), "mcp:web", trusted=True
    )
    assert other is not None and other.words() == ["not idempotent", "open world"]
    assert ToolHints.from_mcp(None, "mcp:x", trusted=True) is None


def test_a_trusted_read_only_hint_stands_for_an_allow_rule_naming_the_tool() -> None:
    hints = ToolHints(read_only=True, trusted=True, origin="mcp:files")
    rule, action = apply_hints("files__read", None, "ask", hints)
    assert action == "allow"
    assert rule is not None and rule.action == "allow"
    assert rule.source == "readOnlyHint of mcp:files (trust_hints)"
    assert rule.pattern.matches("files__read", {}) and not rule.pattern.matches("files__x", {})
