"""The argument pipeline: raw string -> parsed -> tool found -> prepared -> validated.

Each stage is a small function that raises `ArgumentsError` naming its stage, so a
failure becomes an error result for the model (execute never runs) and the
inspector can show exactly where the arguments went wrong.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from workbench.agent.events import ToolArgumentsEvent
from workbench.agent.tool import AgentTool
from workbench.agent.types import ToolCall

Stage = Literal["parse", "lookup", "prepare", "validate"]


class ArgumentsError(Exception):
    """A call's arguments failed at `stage`; `str(self)` is what the model is told."""

    def __init__(self, stage: Stage, message: str) -> None:
        super().__init__(message)
        self.stage: Stage = stage


def parse_arguments(tool_call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a dict: the raw string parsed when there is one."""
    raw = tool_call.raw_arguments
    if raw is None:
        return tool_call.arguments
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArgumentsError(
            "parse",
            f"Invalid JSON in arguments for tool {tool_call.name}: {exc.msg} at line "
            f"{exc.lineno} column {exc.colno} (char {exc.pos})\n\nReceived arguments:\n{raw}",
        ) from None
    if not isinstance(value, dict):
        raise ArgumentsError(
            "parse",
            f"Arguments for tool {tool_call.name} must be a JSON object, got "
            f"{_json_kind(value)}\n\nReceived arguments:\n{raw}",
        )
    return value


def find_tool(tools: Sequence[AgentTool], name: str) -> AgentTool:
    for candidate in tools:
        if candidate.name == name:
            return candidate
    raise ArgumentsError("lookup", f"Tool {name} not found")


def prepare_arguments(tool: AgentTool, parsed: dict[str, Any]) -> dict[str, Any]:
    if tool.prepare_arguments is None:
        return parsed
    try:
        prepared = tool.prepare_arguments(parsed)
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the model
        raise ArgumentsError(
            "prepare", f"Preparing arguments for tool {tool.name} failed: {_describe(exc)}"
        ) from None
    if not isinstance(prepared, dict):
        raise ArgumentsError(
            "prepare",
            f"prepare_arguments of tool {tool.name} returned {type(prepared).__name__}, "
            "not an object",
        )
    return prepared


def validate_arguments(tool: AgentTool, prepared: dict[str, Any]) -> BaseModel:
    try:
        return tool.parameters.model_validate(prepared)
    except ValidationError as exc:
        raise ArgumentsError("validate", format_validation_error(tool.name, exc, prepared)) from None
    except Exception as exc:  # noqa: BLE001 - a validator may raise anything (TypeError, ...)
        raise ArgumentsError(
            "validate", f"Validating arguments for tool {tool.name} failed: {_describe(exc)}"
        ) from None


def format_validation_error(tool_name: str, exc: ValidationError, received: Any) -> str:
    """Every failing field path with its problem, then the arguments received (as pi does)."""
    lines = [f'Validation failed for tool "{tool_name}":']
    for error in exc.errors(include_url=False):
        lines.append(f"  - {field_path(error['loc'])}: {error['msg']}")
    received_text = json.dumps(received, indent=2, ensure_ascii=False, default=str)
    return "\n".join(lines) + f"\n\nReceived arguments:\n{received_text}"


def field_path(loc: Sequence[int | str]) -> str:
    """`("edits", 0, "old_text")` -> `edits[0].old_text`; the empty path is `root`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "root"


@dataclass
class ArgumentsOutcome:
    """Everything the pipeline saw for one call, whether or not it got through."""

    tool_call: ToolCall
    tool: AgentTool | None = None
    parsed: dict[str, Any] | None = None
    prepared: dict[str, Any] | None = None
    validated: BaseModel | None = None
    error: ArgumentsError | None = None

    def event(self) -> ToolArgumentsEvent:
        return ToolArgumentsEvent(
            tool_call_id=self.tool_call.id,
            tool_name=self.tool_call.name,
            raw=self.tool_call.raw_arguments,
            parsed=self.parsed,
            prepared=self.prepared,
            validated=None if self.validated is None else _dump_json(self.validated),
            failed_stage=None if self.error is None else self.error.stage,
            error=None if self.error is None else str(self.error),
        )


def run_argument_pipeline(tool_call: ToolCall, tools: Sequence[AgentTool]) -> ArgumentsOutcome:
    """Run parse, lookup, prepare and validate, stopping at the first failure."""
    outcome = ArgumentsOutcome(tool_call)
    try:
        outcome.parsed = parse_arguments(tool_call)
        outcome.tool = find_tool(tools, tool_call.name)
        outcome.prepared = prepare_arguments(outcome.tool, outcome.parsed)
        outcome.validated = validate_arguments(outcome.tool, outcome.prepared)
    except ArgumentsError as exc:
        outcome.error = exc
    return outcome


def _dump_json(model: BaseModel) -> dict[str, Any]:
    """The validated parameters as JSON data; values JSON cannot hold are shown by repr."""
    try:
        return model.model_dump(mode="json")
    except Exception:  # noqa: BLE001 - e.g. a validator produced an arbitrary object
        return to_jsonable_python(model, fallback=repr)


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
