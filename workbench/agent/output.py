"""Structured results: a tool's `output_schema` against a result's `structured_content`.

A tool that declares an output schema promises a JSON value of that shape with every
result (MCP's `outputSchema`/`structuredContent`). The loop checks the promise: a
missing or mismatching value turns the result into an error result that names the
field, so the model (and the person debugging) sees the tool broke its contract.
"""

from __future__ import annotations

import warnings
from typing import Any
from weakref import WeakKeyDictionary

from pydantic import BaseModel, ValidationError

from workbench.agent.arguments import _schema_problems, field_path
from workbench.agent.tool import AgentTool, AgentToolResult

_validators: WeakKeyDictionary[AgentTool, tuple[dict[str, Any], Any]] = WeakKeyDictionary()


def output_problem(tool: AgentTool, result: AgentToolResult) -> str | None:
    """Why `result` breaks `tool`'s output schema (None: it keeps it, or there is none)."""
    schema = tool.output_schema
    if schema is None or result.is_error:
        return None
    value = result.structured_content
    if value is None:
        return f'Tool "{tool.name}" declares an output schema but returned no structured content'
    try:
        if isinstance(schema, dict):
            problems = list(_schema_problems(_validator(tool, schema), value))
        else:
            problems = _model_problems(schema, value)
    except Exception as exc:  # noqa: BLE001 - a broken schema is the tool's error, not the loop's
        return f'Checking the structured content of tool "{tool.name}" failed: {exc}'
    if not problems:
        return None
    lines = [f'Structured content of tool "{tool.name}" does not match its output schema:']
    lines += [f"  - {field_path(path)}: {message}" for path, message in problems]
    return "\n".join(lines)


def checked_result(tool: AgentTool, result: AgentToolResult) -> tuple[AgentToolResult, bool]:
    """A returned result, and whether it is an error: the tool said so (`is_error`), or
    its structured content breaks its output schema (then an error result saying how,
    keeping the content it came with for the inspector)."""
    problem = output_problem(tool, result)
    if problem is None:
        return result, result.is_error
    failed = AgentToolResult.text(problem, details={} if result.details is None else result.details)
    failed.structured_content = result.structured_content
    return failed, True


def _model_problems(model: type[BaseModel], value: Any) -> list[tuple[tuple[Any, ...], str]]:
    try:
        model.model_validate(value)
    except ValidationError as exc:
        return [(tuple(e["loc"]), e["msg"]) for e in exc.errors(include_url=False)]
    return []


def _validator(tool: AgentTool, schema: dict[str, Any]) -> Any:
    cached = _validators.get(tool)
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cls = validators.validator_for(schema, default=Draft202012Validator)
    cls.check_schema(schema)
    validator = cls(schema)
    _validators[tool] = (schema, validator)
    return validator
