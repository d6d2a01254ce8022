"""Tools: a name, a schema the model sees, and the code that really runs.

`AgentTool` is the dataclass form from pi (`name`, `label`, `description`,
`parameters`, `execute`, optional `prepare_arguments` and `execution_mode`).
`@tool` builds one from an annotated function (async, or sync: a sync one runs in a
worker thread so it cannot freeze the app), the way pydantic-ai and the OpenAI Agents
SDK users expect.

`parameters` is a pydantic model, or a JSON Schema object (a dict) for tools that
bring their own schema (MCP servers do). Arguments validated against a JSON Schema
become a `JsonArguments` instance, so hooks and `execute` handle both kinds alike.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints, overload

import anyio
import anyio.from_thread
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from workbench.agent.abort import AbortSignal
from workbench.agent.types import ImageContent, TextContent, ToolResultContent


class AgentToolResult(BaseModel):
    """What a tool returns: `content` goes to the model, `details` to the UI."""

    content: list[ToolResultContent] = Field(default_factory=list)
    details: Any = None
    terminate: bool = False
    """Ask the loop to stop after this batch (it stops only if every result asks)."""
    is_error: bool = False
    """The call failed, without raising: the model sees an error result, and `details`
    (and `structured_content`) are kept, which a raised exception cannot carry."""
    structured_content: Any = None
    """A JSON value for programs (MCP's `structuredContent`); checked against the
    tool's `output_schema` when it has one. The model reads `content`."""

    @classmethod
    def text(cls, text: str, details: Any = None) -> AgentToolResult:
        return cls(content=[TextContent(text=text)], details=details)


class JsonArguments(BaseModel):
    """The validated arguments of a tool whose `parameters` is a JSON Schema.

    Every argument is an extra field, so this behaves like a pydantic parameters
    instance wherever the loop and the hooks use one: `args.path` reads an
    argument, assigning one (`args.path = "x"`) changes what execute receives,
    and `model_dump(mode="json")` returns the arguments as a dict. Nested objects
    and arrays stay plain dicts and lists; values are never coerced (a JSON Schema
    validates, it does not convert).
    """

    model_config = ConfigDict(extra="allow")


OnUpdate = Callable[[AgentToolResult], None]
Execute = Callable[[str, Any, AbortSignal, OnUpdate], Awaitable[AgentToolResult]]
PrepareArguments = Callable[[dict[str, Any]], dict[str, Any]]
ExecutionMode = Literal["sequential", "parallel"]


@dataclass(eq=False)
class AgentTool:
    """A tool the model may ask for. `execute` raises on failure; the loop reports it."""

    name: str
    label: str
    description: str
    parameters: type[BaseModel] | dict[str, Any]
    """The pydantic model the arguments are validated against, or a JSON Schema
    object (validated with `jsonschema`; the arguments become `JsonArguments`)."""
    execute: Execute
    prepare_arguments: PrepareArguments | None = None
    """Optional, pure: reshape raw arguments before validation (no side effects)."""
    execution_mode: ExecutionMode | None = None
    """"sequential" makes the whole batch it appears in run one call at a time."""
    source: str | None = field(default=None, compare=False)
    """Where the tool comes from ("builtin", "mcp:server", ...), for display."""
    output_schema: type[BaseModel] | dict[str, Any] | None = None
    """The shape of the results' `structured_content` (a pydantic model or a JSON
    Schema). A result that does not match (or has none) becomes an error result."""
    hints: Any = field(default=None, compare=False)
    """Workbench addition: what the tool's origin says about it (MCP annotations, as a
    `workbench.permissions.hints.ToolHints`); the gate believes them only as far as
    that module says."""

    @cached_property
    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the parameters, as sent to the model."""
        if isinstance(self.parameters, dict):
            return self.parameters
        return self.parameters.model_json_schema()

    @property
    def output_json_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of `output_schema` (None without one)."""
        schema = self.output_schema
        if schema is None or isinstance(schema, dict):
            return schema
        return schema.model_json_schema()


# -- the decorator -----------------------------------------------------------------

_SPECIAL = {"tool_call_id", "signal", "on_update"}


@overload
def tool(fn: Callable[..., Any], /) -> AgentTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    label: str | None = None,
    description: str | None = None,
    execution_mode: ExecutionMode | None = None,
    prepare_arguments: PrepareArguments | None = None,
    output_schema: type[BaseModel] | dict[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], AgentTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    label: str | None = None,
    description: str | None = None,
    execution_mode: ExecutionMode | None = None,
    prepare_arguments: PrepareArguments | None = None,
    output_schema: type[BaseModel] | dict[str, Any] | None = None,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Build an `AgentTool` from an annotated function, async or sync.

    The parameters model comes from the signature (or from a single parameter
    annotated with a pydantic model); descriptions come from the docstring's first
    paragraph and its `Args:` section. The function may also take `tool_call_id`,
    `signal` and `on_update` by name. It may return an `AgentToolResult`, a string,
    a list of content blocks, or any JSON-serialisable value.

    With `output_schema`, a returned value (a dict, a pydantic model) also becomes the
    result's `structured_content`, checked against the schema.

    A sync function runs in a worker thread (abandoned, not killed, when the call is
    cancelled after an abort); its `on_update` may be called from that thread.
    """

    def build(func: Callable[..., Any]) -> AgentTool:
        if not callable(func) or inspect.isclass(func):
            raise TypeError(f"@tool needs a function, got {func!r}")
        is_async = inspect.iscoroutinefunction(func)
        summary, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
        params_model, single = _parameters_model(func, arg_docs)
        wanted = set(inspect.signature(func).parameters) & _SPECIAL

        async def execute(
            tool_call_id: str, params: BaseModel, signal: AbortSignal, on_update: OnUpdate
        ) -> AgentToolResult:
            extra = {"tool_call_id": tool_call_id, "signal": signal, "on_update": on_update}
            kwargs = {k: v for k, v in extra.items() if k in wanted}
            if single is not None:
                kwargs[single] = params
            else:
                kwargs.update({k: getattr(params, k) for k in type(params).model_fields})
            if is_async:
                value = await func(**kwargs)
            else:
                if "on_update" in kwargs:
                    kwargs["on_update"] = _from_thread(on_update)
                call = functools.partial(func, **kwargs)
                value = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
            result = to_tool_result(value)
            if (
                output_schema is not None
                and result.structured_content is None
                and not (isinstance(value, AgentToolResult))
            ):
                result.structured_content = result.details
            return result

        execute.__wrapped__ = func  # type: ignore[attr-defined]  # where the tool was written

        tool_name = name or func.__name__
        return AgentTool(
            name=tool_name,
            label=label or tool_name.replace("_", " ").title(),
            description=description or summary,
            parameters=params_model,
            execute=execute,
            prepare_arguments=prepare_arguments,
            execution_mode=execution_mode,
            output_schema=output_schema,
        )

    return build(fn) if fn is not None else build


def _from_thread(on_update: OnUpdate) -> OnUpdate:
    """`on_update` for a worker thread: each update is handed to the event loop."""

    def push(partial: AgentToolResult) -> None:
        anyio.from_thread.run_sync(on_update, partial)

    return push


def to_tool_result(value: Any) -> AgentToolResult:
    """Turn whatever a decorated tool returned into an `AgentToolResult`."""
    if isinstance(value, AgentToolResult):
        return value
    if isinstance(value, str):
        return AgentToolResult.text(value)
    if isinstance(value, (TextContent, ImageContent)):
        return AgentToolResult(content=[value])
    if isinstance(value, list) and all(isinstance(v, (TextContent, ImageContent)) for v in value):
        return AgentToolResult(content=value)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return AgentToolResult(
        content=[TextContent(text=json.dumps(value, ensure_ascii=False, default=str))],
        details=value,
    )


def _parameters_model(
    func: Callable[..., Any], arg_docs: dict[str, str]
) -> tuple[type[BaseModel], str | None]:
    hints = get_type_hints(func, include_extras=True)  # keep Annotated[..., Field(...)]
    fields: dict[str, Any] = {}
    params = [p for p in inspect.signature(func).parameters.values() if p.name not in _SPECIAL]
    if len(params) == 1:
        hint = hints.get(params[0].name)
        if inspect.isclass(hint) and issubclass(hint, BaseModel):
            return hint, params[0].name
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"@tool does not support *args/**kwargs ({func.__name__})")
        annotation = hints.get(p.name, Any)
        default = ... if p.default is p.empty else p.default
        doc = arg_docs.get(p.name)
        if doc is None or _described(annotation):  # an explicit Field(description=...) wins
            fields[p.name] = (annotation, Field(default))
        else:
            fields[p.name] = (annotation, Field(default, description=doc))
    model_name = "".join(part.title() for part in func.__name__.split("_")) + "Params"
    return create_model(model_name, **fields), None


def _described(annotation: Any) -> bool:
    """Whether `Annotated[..., Field(description=...)]` already describes the field."""
    return get_origin(annotation) is Annotated and any(
        isinstance(meta, FieldInfo) and meta.description for meta in get_args(annotation)[1:]
    )


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and its `Args:` entries."""
    lines = doc.splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            if line and not line[0].isspace():
                in_args = False
            elif m := _ARG_LINE.match(line):
                current = m.group(1)
                args[current] = m.group(2).strip()
                continue
            elif current and line.strip():
                args[current] += " " + line.strip()
                continue
            else:
                continue
        if not in_args and not args and not re.match(r"^\s*\w+:\s*$", line):
            summary.append(line)
    text = "\n".join(summary).strip()
    return text.split("\n\n")[0].strip(), args
