"""The argument pipeline: raw string -> parsed -> tool found -> prepared -> validated.

Each stage is a small function that raises `ArgumentsError` naming its stage, so a
failure becomes an error result for the model (execute never runs) and the
inspector can show exactly where the arguments went wrong.

Tools whose `parameters` is a JSON Schema (a dict) are validated with `jsonschema`
(imported only when such a tool is first validated), and their errors are worded
and laid out as pydantic's are, one `  - path: problem` line per failing field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from workbench.agent.events import ArgumentStage, ToolArgumentsEvent
from workbench.agent.tool import AgentTool, JsonArguments
from workbench.agent.types import ToolCall
from workbench.json_text import JsonDepthError, loads


class ArgumentsError(Exception):
    """A call's arguments failed at `stage`; `str(self)` is what the model is told."""

    def __init__(self, stage: ArgumentStage, message: str) -> None:
        super().__init__(message)
        self.stage: ArgumentStage = stage


def parse_arguments(tool_call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a dict: the raw string parsed when there is one."""
    raw = tool_call.raw_arguments
    if raw is None:
        return tool_call.arguments
    if not raw.strip():
        return {}
    try:
        value = loads(raw)
    except JsonDepthError as exc:
        raise ArgumentsError(
            "parse", f"Arguments for tool {tool_call.name} are not usable: {exc}"
        ) from None
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
    """The arguments as the tool's parameters instance (`JsonArguments` for a JSON Schema)."""
    parameters = tool.parameters
    if isinstance(parameters, dict):
        return _validate_json_schema(tool, parameters, prepared)
    try:
        return parameters.model_validate(prepared)
    except ValidationError as exc:
        raise ArgumentsError(
            "validate", format_validation_error(tool.name, exc, prepared)
        ) from None
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


# -- JSON Schema parameters ---------------------------------------------------------

_validators: WeakKeyDictionary[AgentTool, tuple[dict[str, Any], Any]] = WeakKeyDictionary()
"""Each JSON-Schema tool's compiled validator, with the schema it was built from."""


def _validate_json_schema(
    tool: AgentTool, schema: dict[str, Any], prepared: dict[str, Any]
) -> JsonArguments:
    validator = _schema_validator(tool, schema)
    from workbench.agent.schema_patterns import time_bound

    try:
        with time_bound():
            problems = list(_schema_problems(validator, prepared))
    except Exception as exc:  # noqa: BLE001 - e.g. a $ref that does not resolve
        raise ArgumentsError(
            "validate", f"Validating arguments for tool {tool.name} failed: {_describe(exc)}"
        ) from None
    if problems:
        problems.sort(key=lambda problem: _path_key(schema, problem[0]))
        lines = [f'Validation failed for tool "{tool.name}":']
        lines += [f"  - {field_path(path)}: {message}" for path, message in problems]
        received = json.dumps(prepared, indent=2, ensure_ascii=False, default=str)
        raise ArgumentsError("validate", "\n".join(lines) + f"\n\nReceived arguments:\n{received}")
    return JsonArguments.model_validate(prepared)


def _schema_validator(tool: AgentTool, schema: dict[str, Any]) -> Any:
    """The tool's validator: the draft its `$schema` names (default 2020-12), checked once."""
    cached = _validators.get(tool)
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema import (  # type: ignore[import-untyped]
        Draft202012Validator,
        SchemaError,
        validators,
    )

    from workbench.agent.schema_patterns import with_safe_patterns

    # an unknown $schema falls back to the default draft (no warning when one is given)
    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ArgumentsError(
            "validate",
            f"Tool {tool.name} has an invalid JSON Schema for its parameters: {exc.message}",
        ) from None
    validator = with_safe_patterns(cls)(schema)
    _validators[tool] = (schema, validator)
    return validator


Problem = tuple[tuple[int | str, ...], str]


def _schema_problems(validator: Any, instance: Any) -> Iterator[Problem]:
    """(path, pydantic-worded message) for every error, without duplicates."""
    seen: set[Problem] = set()
    for error in validator.iter_errors(instance):
        for problem in _translate(error):
            if problem not in seen:
                seen.add(problem)
                yield problem


def _path_key(schema: Any, path: tuple[int | str, ...]) -> tuple[tuple[int, str], ...]:
    """Sort key for an error path: array indexes in order, properties in the schema's
    order (as pydantic lists fields), unknown properties after them by name."""
    key: list[tuple[int, str]] = []
    node = schema
    for part in path:
        node = _resolve(schema, node)
        if isinstance(part, int):
            key.append((part, ""))
            node = node.get("items") if isinstance(node, dict) else None
            continue
        props = node.get("properties") if isinstance(node, dict) else None
        if isinstance(props, dict) and part in props:
            key.append((list(props).index(part), ""))
            node = props[part]
        else:
            key.append((1 << 30, part))
            node = None
    return tuple(key)


def _resolve(root: Any, node: Any) -> Any:
    """Follow a local `$ref` (`#/$defs/X`) and step into the first object-like branch of
    an `anyOf` / `oneOf` / `allOf`; anything else is returned as it is."""
    for _ in range(8):  # bounded: a self-referencing $ref cannot loop forever
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for name in ref[2:].split("/"):
                name = name.replace("~1", "/").replace("~0", "~")
                target = target.get(name, {}) if isinstance(target, dict) else {}
            node = target
            continue
        branches = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
        if "properties" not in node and "items" not in node and isinstance(branches, list):
            node = next(
                (b for b in branches if isinstance(b, dict) and b.get("type") != "null"), None
            )
            continue
        return node
    return node


_TYPE_WORDS = {
    "integer": "a valid integer",
    "number": "a valid number",
    "string": "a valid string",
    "boolean": "a valid boolean",
    "array": "a valid list",
    "object": "a valid dictionary",
    "null": "None",
}


def _translate(error: Any) -> list[Problem]:
    """One jsonschema error as pydantic would word it (its message as a fallback).

    A missing property or an unexpected one is reported at its own path (as pydantic
    does), so the inspector can pin the message to that field.
    """
    path = tuple(error.absolute_path)
    kind, value, instance = error.validator, error.validator_value, error.instance
    if kind == "required" and isinstance(instance, dict):
        return [((*path, name), "Field required") for name in value if name not in instance]
    if kind == "additionalProperties" and value is False and isinstance(instance, dict):
        from workbench import safe_regex

        known = error.schema.get("properties", {})
        patterns = list(error.schema.get("patternProperties", {}))
        return [
            ((*path, key), "Extra inputs are not permitted")
            for key in instance
            if key not in known and not any(safe_regex.search(p, key) for p in patterns)
        ]
    if kind in ("anyOf", "oneOf") and error.context:
        return _alternatives(error, path)
    return [(path, _message(error) or _short(error.message))]


def _alternatives(error: Any, path: tuple[int | str, ...]) -> list[Problem]:
    """No alternative of an anyOf / oneOf fit: name the expected types when they differ
    only in type (a nullable field, `integer | string`), else report the alternative of
    the right type that came closest (what the model most likely meant)."""
    context = list(error.context)
    if all(e.validator in ("type", "const", "enum") and not e.relative_path for e in context):
        phrases = list(
            dict.fromkeys(p for e in context for p in _expected(e.validator, e.validator_value, e))
        )
        if len(phrases) > 1 and "None" in phrases:  # a nullable field: as pydantic says it
            phrases.remove("None")
        return [(path, "Input should be " + _or(phrases))]
    branches: dict[Any, list[Any]] = {}
    for e in context:
        branches.setdefault(e.relative_schema_path[0], []).append(e)
    right_type = [
        errors
        for errors in branches.values()
        if not any(e.validator == "type" and not e.relative_path for e in errors)
    ]
    if right_type:
        return [p for e in min(right_type, key=len) for p in _translate(e)]
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    return _translate(best_match(context))


def _expected(kind: str, value: Any, error: Any = None) -> list[str]:
    if kind == "type":
        types = value if isinstance(value, list) else [value]
        schema = error.schema if error is not None else {}
        if "object" in types and "properties" in schema and isinstance(schema.get("title"), str):
            # a pydantic model's schema: worded as pydantic words a model field
            return [
                f"a valid dictionary or instance of {schema['title']}"
                if t == "object"
                else _type_word(t)
                for t in types
            ]
        return [_type_word(t) for t in types]
    if kind == "const":
        return [repr(value)]
    return [repr(v) for v in value]  # enum


def _type_word(kind: Any) -> str:
    """A JSON type as pydantic names it; draft 3 also allows a schema in a type list."""
    return _TYPE_WORDS[kind] if isinstance(kind, str) else f"valid under {kind}"


def _message(error: Any) -> str | None:
    kind, value, instance = error.validator, error.validator_value, error.instance
    if kind == "type":
        types = value if isinstance(value, list) else [value]
        if len(types) > 1 and "null" in types:  # pydantic names the non-null type only
            types = [t for t in types if t != "null"]
        return "Input should be " + _or(_expected("type", types, error))
    if kind in ("enum", "const"):
        return "Input should be " + _or(_expected(kind, value))
    if kind in ("minimum", "maximum") and error.schema.get(f"exclusive{kind.title()}") is True:
        kind = f"exclusive{kind.title()}"  # draft 4: a boolean beside minimum / maximum
    size = len(instance) if isinstance(instance, (str, list, dict)) else 0
    return {
        "minLength": f"String should have at least {_n(value, 'character')}",
        "maxLength": f"String should have at most {_n(value, 'character')}",
        "pattern": f"String should match pattern '{value}'",
        "minimum": f"Input should be greater than or equal to {value}",
        "maximum": f"Input should be less than or equal to {value}",
        "exclusiveMinimum": f"Input should be greater than {value}",
        "exclusiveMaximum": f"Input should be less than {value}",
        "multipleOf": f"Input should be a multiple of {value}",
        "minItems": f"List should have at least {_n(value, 'item')} after validation, not {size}",
        "maxItems": f"List should have at most {_n(value, 'item')} after validation, not {size}",
        "minProperties": f"Dictionary should have at least {_n(value, 'item')}, not {size}",
        "maxProperties": f"Dictionary should have at most {_n(value, 'item')}, not {size}",
        "uniqueItems": "List should have unique items",
    }.get(kind)


def _or(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " or " + phrases[-1]


def _n(count: Any, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the outcome ---------------------------------------------------------------------


@dataclass
class ArgumentsOutcome:
    """Everything the pipeline saw for one call, whether or not it got through."""

    tool_call: ToolCall
    tool: AgentTool | None = None
    parsed: dict[str, Any] | None = None
    prepared: dict[str, Any] | None = None
    validated: BaseModel | None = None
    error: ArgumentsError | None = None

    def event(self, *, edited: bool = False) -> ToolArgumentsEvent:
        return ToolArgumentsEvent(
            edited=edited,
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
        dumped: dict[str, Any] = to_jsonable_python(model, fallback=repr)
        return dumped


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
