"""Re-validating arguments a person edited (in the permission dialog or at a pause).

Edited arguments go through the same last two stages as the model's own: the
tool's `prepare_arguments`, then its pydantic model (or, for a tool whose
parameters are a JSON Schema, `jsonschema`, giving `JsonArguments`). A failure
raises `InvalidEdit` with the per-field messages, formatted exactly as the loop
formats them for the model, so the dialog can show them and keep the call waiting.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from workbench.agent import AgentTool
from workbench.agent.arguments import ArgumentsError, prepare_arguments, validate_arguments


class InvalidEdit(ValueError):
    """Edited arguments failed preparation or validation; `str()` says which fields and why."""


NOT_EDITABLE = (
    "An ACP agent runs its own arguments: an edit cannot be passed on to it. Deny the "
    "call, then say what to run instead in your next message."
)
"""Why a person's edit of an ACP agent's call is refused (ACP has no way to change a
call's input: allowed, the agent would run what it asked, not the edit)."""


def revalidate(tool: AgentTool | None, args: Any) -> BaseModel:
    """Validate `args` (a dict) for `tool` as the loop would; raise `InvalidEdit` if they fail.

    Returns the tool's parameters instance: its pydantic model, or `JsonArguments`
    when the tool's parameters are a JSON Schema.
    """
    if tool is None:
        raise InvalidEdit("Cannot check the edited arguments: the tool is unknown")
    if tool.source == "acp":
        raise InvalidEdit(NOT_EDITABLE)
    if not isinstance(args, dict):
        raise InvalidEdit(f"Edited arguments must be a JSON object, got {type(args).__name__}")
    try:
        return validate_arguments(tool, prepare_arguments(tool, args))
    except ArgumentsError as exc:
        raise InvalidEdit(str(exc)) from None
