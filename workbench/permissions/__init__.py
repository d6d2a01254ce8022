"""Permissions: rules (allow / ask / deny by tool and argument patterns) and the gate.

The gate is a `before_tool_call` hook; it never imports a UI. See `rules` for the
rule syntax, the rules file and precedence, `patterns` for how argument globs
match, and `gate` for the ask/answer handshake.
"""

from workbench.permissions.answers import (
    AnswerError,
    AnswerKind,
    PendingRequest,
    PermissionAnswer,
)
from workbench.permissions.edits import InvalidEdit, revalidate
from workbench.permissions.gate import PermissionGate, Policy
from workbench.permissions.hooks import chain_after, chain_before
from workbench.permissions.patterns import CallPattern, PatternError, suggest_pattern
from workbench.permissions.rules import (
    RULES_FILE,
    Action,
    Rule,
    RuleError,
    RuleSet,
    append_rule,
    default_rules,
    load_rules,
    load_rules_file,
    rules_from_flags,
)

__all__ = [
    "RULES_FILE",
    "Action",
    "AnswerError",
    "AnswerKind",
    "CallPattern",
    "InvalidEdit",
    "PatternError",
    "PendingRequest",
    "PermissionAnswer",
    "PermissionGate",
    "Policy",
    "Rule",
    "RuleError",
    "RuleSet",
    "append_rule",
    "chain_after",
    "chain_before",
    "default_rules",
    "load_rules",
    "load_rules_file",
    "revalidate",
    "rules_from_flags",
    "suggest_pattern",
]
