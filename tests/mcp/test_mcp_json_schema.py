"""Tools whose parameters are a JSON Schema (as MCP tools bring): validated with
`jsonschema`, reported in pydantic's words and layout, and handed to hooks and
execute as `JsonArguments`, which behaves like a pydantic parameters instance."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from workbench.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    ToolArgumentsEvent,
    ToolResultMessage,
)
from workbench.agent.arguments import ArgumentsError, validate_arguments
from workbench.agent.tool import JsonArguments
from workbench.permissions import InvalidEdit, revalidate
from workbench.providers.scripted import Scenario, ScriptedProvider


class LineItem(BaseModel):
    sku: str = Field(min_length=3)
    quantity: int = Field(ge=1, le=99)
    color: Literal["red", "green", "blue"] = "red"
    tags: list[str] = Field(default_factory=list, max_length=2)


class Order(BaseModel):
    customer: str
    items: list[LineItem] = Field(min_length=1)
    priority: Literal["low", "normal", "high"]
    note: str | None = None
    code: str = Field(default="A1", pattern=r"^[A-Z]\d$")
    discount: float = Field(default=0, ge=0, lt=1)


async def _never(*_: Any) -> AgentToolResult:
    raise AssertionError("execute must not run")


PYDANTIC = AgentTool("order", "Order", "d", Order, _never)
SCHEMA = AgentTool("order", "Order", "d", Order.model_json_schema(), _never)


def _lines(tool: AgentTool, args: dict[str, Any]) -> list[str]:
    with pytest.raises(ArgumentsError) as info:
        validate_arguments(tool, args)
    assert info.value.stage == "validate"
    head, received = str(info.value).split("\n\nReceived arguments:\n")
    assert received.startswith("{")
    return head.splitlines()


BAD_INPUTS = [
    {},
    {"customer": 7, "items": [], "priority": "urgent"},
    {
        "customer": "ann",
        "priority": "low",
        "items": [{"sku": "x", "quantity": 0, "color": "pink"}, {"quantity": 100}],
        "note": 5,
    },
    {
        "customer": "ann",
        "priority": "high",
        "items": [{"sku": "abc", "quantity": 1, "tags": ["a", "b", "c"]}],
        "code": "zz",
        "discount": 1,
    },
    {"customer": "ann", "priority": "high", "items": "none"},
    {"customer": "ann", "priority": "high", "items": [["not", "an", "object"]]},
]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=range(len(BAD_INPUTS)))
def test_errors_read_exactly_as_pydantic_writes_them(bad: dict[str, Any]) -> None:
    assert _lines(SCHEMA, bad) == _lines(PYDANTIC, bad)


def test_valid_arguments_become_json_arguments() -> None:
    args = {"customer": "ann", "priority": "low", "items": [{"sku": "abc", "quantity": 2}]}
    value = validate_arguments(SCHEMA, args)
    assert isinstance(value, JsonArguments) and isinstance(value, BaseModel)
    assert value.customer == "ann" and value.items == [{"sku": "abc", "quantity": 2}]
    value.customer = "bob"
    value.extra_flag = True
    assert value.model_dump(mode="json") == {**args, "customer": "bob", "extra_flag": True}
    # no defaults filled in, no coercion: the JSON Schema validates, it does not convert
    assert "note" not in value.model_dump()
    assert _lines(SCHEMA, {**args, "customer": "ann", "items": [{"sku": "abc", "quantity": "2"}]})


def test_keys_that_shadow_model_attributes_survive() -> None:
    tool = AgentTool("t", "t", "d", {"type": "object"}, _never)
    odd = {"model_config": 1, "copy": 2, "_private": 3, "with space": 4, "__dict__": 5}
    assert validate_arguments(tool, odd).model_dump(mode="json") == odd


def test_other_keywords_are_worded_like_pydantic_too() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"const": "fast"},
            "size": {"type": ["integer", "string"]},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
            "ids": {"type": "array", "uniqueItems": True},
            "opts": {"type": "object", "minProperties": 1},
            "pick": {"oneOf": [{"type": "object", "required": ["a"]}, {"type": "boolean"}]},
        },
        "additionalProperties": False,
    }
    tool = AgentTool("t", "t", "d", schema, _never)
    lines = _lines(
        tool,
        {
            "mode": "slow",
            "size": 1.5,
            "ratio": 0.7,
            "ids": [1, 1],
            "opts": {},
            "pick": {"b": 1},
            "zzz": 1,
        },
    )
    assert lines == [
        'Validation failed for tool "t":',
        "  - mode: Input should be 'fast'",
        "  - size: Input should be a valid integer or a valid string",
        "  - ratio: Input should be a multiple of 0.5",
        "  - ids: List should have unique items",
        "  - opts: Dictionary should have at least 1 item, not 0",
        "  - pick.a: Field required",
        "  - zzz: Extra inputs are not permitted",
    ]


def test_the_draft_named_by_dollar_schema_is_used() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    tool = AgentTool("t", "t", "d", draft4, _never)
    assert _lines(tool, {"n": 0})[1] == "  - n: Input should be greater than 0"
    assert validate_arguments(tool, {"n": 1}).n == 1


def test_an_invalid_schema_is_a_clear_validation_error() -> None:
    schema = {"type": "object", "properties": {"x": {"type": 5}}}
    tool = AgentTool("broken", "b", "d", schema, _never)
    with pytest.raises(ArgumentsError) as info:
        validate_arguments(tool, {"x": 1})
    assert info.value.stage == "validate"
    assert str(info.value).startswith("Tool broken has an invalid JSON Schema for its parameters:")


def test_json_schema_is_sent_as_given() -> None:
    schema = Order.model_json_schema()
    assert SCHEMA.json_schema is SCHEMA.parameters
    assert SCHEMA.json_schema == schema == PYDANTIC.json_schema


def test_revalidate_an_edit_against_a_json_schema() -> None:
    with pytest.raises(InvalidEdit) as info:
        revalidate(SCHEMA, {"customer": "ann", "items": []})
    assert "  - items: List should have at least 1 item after validation, not 0" in str(info.value)
    assert "  - priority: Field required" in str(info.value)
    good = {"customer": "ann", "priority": "low", "items": [{"sku": "abc", "quantity": 1}]}
    edited = revalidate(SCHEMA, good)
    assert isinstance(edited, JsonArguments) and edited.model_dump() == good


async def test_the_loop_validates_and_hooks_edit_json_arguments() -> None:
    received: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(params)
        return AgentToolResult.text(f"placed for {params.customer}")

    tool = AgentTool("order", "Order", "d", Order.model_json_schema(), execute)
    good = {"customer": "ann", "priority": "low", "items": [{"sku": "abc", "quantity": 1}]}
    scenario = Scenario.model_validate(
        {
            "name": "json-schema",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "order", "arguments": {"customer": "ann", "items": []}},
                        {"name": "order", "arguments": good},
                    ]
                },
                {"text": "done"},
            ],
        }
    )
    provider = ScriptedProvider(scenario)

    def before(ctx: BeforeToolCallContext, _signal: Any) -> None:
        ctx.args.customer = "bob"  # mutating the validated args changes what execute gets

    agent = Agent(stream_fn=provider, model=provider.model, tools=[tool], before_tool_call=before)
    events: list[Any] = []
    agent.subscribe(lambda e, _s=None: events.append(e))
    await agent.prompt("go")

    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [True, False]
    assert results[0].text.startswith('Validation failed for tool "order":\n  - items: List')
    assert results[1].text == "placed for bob"
    assert len(received) == 1 and isinstance(received[0], JsonArguments)
    assert received[0].model_dump() == {**good, "customer": "bob"}
    stages = [e for e in events if isinstance(e, ToolArgumentsEvent)]
    assert [s.failed_stage for s in stages] == ["validate", None]
    assert stages[1].validated == good
