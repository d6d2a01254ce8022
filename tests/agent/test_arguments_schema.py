"""A JSON-Schema tool's validation errors, word for word: what the model reads (and the
inspector shows) for each kind of failure, in the order pydantic would list them.

`tests/mcp/test_mcp_json_schema.py` compares the wording with pydantic's own for a
pydantic model's schema; these cover the schemas MCP servers write by hand: bare
types, `anyOf` / `oneOf` / `allOf`, `$ref` chains, size limits and the keywords
pydantic has no wording for.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from workbench.agent import AgentTool
from workbench.agent.arguments import ArgumentsError, validate_arguments


async def _never(*_: Any) -> Any:
    raise AssertionError("execute must not run")


def tool(schema: dict[str, Any], name: str = "t") -> AgentTool:
    return AgentTool(name, name, "d", schema, _never)


def message(schema: dict[str, Any], args: dict[str, Any]) -> str:
    with pytest.raises(ArgumentsError) as info:
        validate_arguments(tool(schema), args)
    assert info.value.stage == "validate"
    return str(info.value)


def problems(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """The `  - path: problem` lines of the error, in the order they are listed."""
    head, _received = message(schema, args).split("\n\nReceived arguments:\n")
    lines = head.splitlines()
    assert lines[0] == 'Validation failed for tool "t":'
    return lines[1:]


def field(schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema with one property `x` of `schema`."""
    return {"type": "object", "properties": {"x": schema}}


# -- types -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "wrong", "words"),
    [
        ("integer", "1", "a valid integer"),
        ("number", "1.5", "a valid number"),
        ("string", 5, "a valid string"),
        ("boolean", "true", "a valid boolean"),
        ("array", "[]", "a valid list"),
        ("object", "{}", "a valid dictionary"),
        ("null", 0, "None"),
    ],
)
def test_each_json_type_is_named_as_pydantic_names_it(kind: str, wrong: Any, words: str) -> None:
    assert problems(field({"type": kind}), {"x": wrong}) == [f"  - x: Input should be {words}"]


def test_a_nullable_type_names_only_its_other_type_as_pydantic_does() -> None:
    assert problems(field({"type": ["string", "null"]}), {"x": 5}) == [
        "  - x: Input should be a valid string"
    ]
    assert problems(field({"type": ["integer", "string"]}), {"x": 1.5}) == [
        "  - x: Input should be a valid integer or a valid string"
    ]
    assert problems(field({"type": ["integer", "string", "null"]}), {"x": 1.5}) == [
        "  - x: Input should be a valid integer or a valid string"
    ]


def test_a_draft_3_schema_inside_a_type_list_is_named_not_a_crash() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-03/schema#",
        "type": "object",
        "properties": {"x": {"type": ["integer", {"type": "string"}]}},
    }
    assert problems(schema, {"x": 1.5}) == [
        "  - x: Input should be a valid integer or valid under {'type': 'string'}"
    ]


# -- anyOf / oneOf / allOf -----------------------------------------------------------


@pytest.mark.parametrize(
    ("alternatives", "wrong", "expected"),
    [
        (
            {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            1.5,
            ["  - x: Input should be a valid integer or a valid string"],
        ),
        (
            {"anyOf": [{"type": "string"}, {"type": "null"}]},
            5,
            ["  - x: Input should be a valid string"],
        ),
        ({"anyOf": [{"type": "null"}]}, 5, ["  - x: Input should be None"]),
        ({"oneOf": [{"const": "a"}, {"const": "b"}]}, "c", ["  - x: Input should be 'a' or 'b'"]),
        (
            {"anyOf": [{"enum": [1, 2]}, {"type": "string"}]},
            3,
            ["  - x: Input should be 1, 2 or a valid string"],
        ),
        # every alternative is an object: the first one's problem, at its own path
        (
            {
                "anyOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}},
                    {"type": "object", "properties": {"a": {"type": "boolean"}}},
                ]
            },
            {"a": "s"},
            ["  - x.a: Input should be a valid integer"],
        ),
        # the alternative of the input's type, though another has fewer problems
        (
            {"oneOf": [{"type": "boolean"}, {"type": "object", "required": ["a", "b"]}]},
            {},
            ["  - x.a: Field required", "  - x.b: Field required"],
        ),
        # of two alternatives of the right type, the one with fewer problems
        (
            {"oneOf": [{"required": ["a", "b"]}, {"required": ["c"]}]},
            {},
            ["  - x.c: Field required"],
        ),
        # no alternative has the input's type, and they differ in more than type
        (
            {"anyOf": [{"type": "string", "minimum": 3}, {"type": "boolean"}]},
            1,
            ["  - x: Input should be a valid string"],
        ),
    ],
    ids=[
        "types",
        "nullable",
        "only-null",
        "consts",
        "enum-or-type",
        "same-type",
        "right-type",
        "closest",
        "best-match",
    ],
)
def test_alternatives_that_all_fail(
    alternatives: dict[str, Any], wrong: Any, expected: list[str]
) -> None:
    assert problems(field(alternatives), {"x": wrong}) == expected


def test_one_of_that_fits_twice_says_so_in_jsonschema_s_words() -> None:
    lines = problems(field({"oneOf": [{"type": "integer"}, {"type": "number"}]}), {"x": 1})
    assert len(lines) == 1 and lines[0].startswith("  - x: 1 is valid under each of ")


# -- the order of the problems -------------------------------------------------------

INNER = {
    "type": "object",
    "properties": {"zeta": {"type": "integer"}, "alpha": {"type": "integer"}, "mid": {}},
}
"""Properties not in alphabetical order: problems are listed in this order."""


def nested(where: dict[str, Any], **defs: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"first": {"type": "integer"}, "outer": where, "last": {}},
        "$defs": {"Inner": INNER, **defs},
    }


@pytest.mark.parametrize(
    ("where", "defs"),
    [
        (INNER, {}),
        ({"$ref": "#/$defs/Inner"}, {}),
        ({"$ref": "#/$defs/Alias"}, {"Alias": {"$ref": "#/$defs/Inner"}}),
        ({"$ref": "#/$defs/a~1b~0c"}, {"a/b~c": INNER}),
        ({"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Inner"}]}, {}),
        ({"oneOf": [{"$ref": "#/$defs/Inner"}, {"type": "string"}]}, {}),
        ({"allOf": [{"$ref": "#/$defs/Inner"}]}, {}),
        ({**INNER, "anyOf": [{"required": ["zeta"]}, {"required": ["alpha"]}]}, {}),
    ],
    ids=[
        "inline",
        "ref",
        "ref-to-ref",
        "escaped-ref",
        "nullable",
        "one-of",
        "all-of",
        "properties-beside-any-of",
    ],
)
def test_problems_are_listed_in_the_schema_s_order_wherever_the_object_is_defined(
    where: dict[str, Any], defs: dict[str, Any]
) -> None:
    args = {"outer": {"alpha": "a", "zeta": "z", "extra": 1}, "first": "f"}
    schema = nested(where, **defs)
    schema["properties"]["outer"] = where
    assert [line.split(":")[0] for line in problems(schema, args)] == [
        "  - first",
        "  - outer.zeta",
        "  - outer.alpha",
    ]


def test_items_of_an_array_are_listed_by_index_then_in_the_schema_s_order() -> None:
    items = {
        "type": "array",
        "items": {"$ref": "#/$defs/Inner"},
        "anyOf": [{"minItems": 1}, {"maxItems": 9}],
    }
    args = {"outer": [{"alpha": "a", "zeta": "z"}, {"alpha": "a"}], "first": "f"}
    assert [line.split(":")[0] for line in problems(nested(items), args)] == [
        "  - first",
        "  - outer[0].zeta",
        "  - outer[0].alpha",
        "  - outer[1].alpha",
    ]


def test_unknown_fields_come_after_the_known_ones_by_name() -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert problems(schema, {"zz": 1, "x-ok": 3, "aa": 1, "b": "s"}) == [
        "  - b: Input should be a valid integer",
        "  - aa: Extra inputs are not permitted",
        "  - zz: Extra inputs are not permitted",
    ]


def test_a_self_referencing_schema_part_validation_never_reaches_cannot_hang_the_report() -> None:
    # `items` is never used (prefixItems covers the one element), but the report
    # looks it up to order the fields: the walk through the $ref loop must end.
    schema = {
        "type": "object",
        "properties": {
            "outer": {
                "type": "array",
                "prefixItems": [{"type": "object", "required": ["zeta", "alpha"]}],
                "items": {"$ref": "#/$defs/Loop"},
            }
        },
        "$defs": {"Loop": {"$ref": "#/$defs/Loop"}},
    }
    assert problems(schema, {"outer": [{}]}) == [
        "  - outer[0].alpha: Field required",
        "  - outer[0].zeta: Field required",
    ]


# -- the wording of each keyword -----------------------------------------------------


@pytest.mark.parametrize(
    ("keywords", "wrong", "expected"),
    [
        ({"minLength": 1}, "", "String should have at least 1 character"),
        ({"minLength": 3}, "ab", "String should have at least 3 characters"),
        ({"maxLength": 1}, "ab", "String should have at most 1 character"),
        ({"maxLength": 3}, "abcd", "String should have at most 3 characters"),
        ({"pattern": "^a"}, "b", "String should match pattern '^a'"),
        ({"minimum": 2}, 1, "Input should be greater than or equal to 2"),
        ({"maximum": 2}, 3, "Input should be less than or equal to 2"),
        ({"exclusiveMinimum": 2}, 2, "Input should be greater than 2"),
        ({"exclusiveMaximum": 2}, 2, "Input should be less than 2"),
        ({"multipleOf": 3}, 4, "Input should be a multiple of 3"),
        ({"minItems": 2}, [1], "List should have at least 2 items after validation, not 1"),
        ({"maxItems": 1}, [1, 2], "List should have at most 1 item after validation, not 2"),
        ({"minProperties": 2}, {"a": 1}, "Dictionary should have at least 2 items, not 1"),
        ({"maxProperties": 1}, {"a": 1, "b": 2}, "Dictionary should have at most 1 item, not 2"),
        ({"uniqueItems": True}, [1, 1], "List should have unique items"),
        ({"enum": ["a", 1]}, "b", "Input should be 'a' or 1"),
        ({"const": 7}, 8, "Input should be 7"),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else None,
)
def test_each_keyword_is_worded_as_pydantic_words_it(
    keywords: dict[str, Any], wrong: Any, expected: str
) -> None:
    assert problems(field(keywords), {"x": wrong}) == [f"  - x: {expected}"]


def test_draft_4_boolean_exclusive_bounds() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "low": {"minimum": 0, "exclusiveMinimum": True},
            "high": {"maximum": 5, "exclusiveMaximum": True},
            "top": {"maximum": 5},
        },
    }
    assert problems(schema, {"low": 0, "high": 5, "top": 6}) == [
        "  - low: Input should be greater than 0",
        "  - high: Input should be less than 5",
        "  - top: Input should be less than or equal to 5",
    ]


def test_a_problem_of_the_whole_object_is_at_root() -> None:
    assert problems({"type": "object", "minProperties": 1}, {}) == [
        "  - root: Dictionary should have at least 1 item, not 0"
    ]


def test_keywords_pydantic_has_no_words_for_keep_jsonschema_s_cut_to_200_characters() -> None:
    schema = field({"not": {"type": "string"}})
    suffix = "' should not be valid under {'type': 'string'}"
    assert problems(schema, {"x": "ab"}) == [f"  - x: 'ab{suffix}"]
    exactly = "a" * (200 - len(suffix) - 1)  # the message is exactly 200 characters
    assert problems(schema, {"x": exactly}) == [f"  - x: '{exactly}{suffix}"]
    longer = "b" * 300
    (line,) = problems(schema, {"x": longer})
    assert line == "  - x: '" + "b" * 198 + "…"


# -- the rest of the message ---------------------------------------------------------


def test_the_arguments_received_follow_indented_with_their_characters_kept() -> None:
    text = message(field({"type": "integer"}), {"x": "café ✓", "y": [1]})
    assert text.endswith('\n\nReceived arguments:\n{\n  "x": "café ✓",\n  "y": [\n    1\n  ]\n}')


def test_a_schema_that_fails_while_validating_is_that_call_s_error() -> None:
    text = message(field({"$ref": "#/$defs/missing"}), {"x": 1})
    assert text.startswith("Validating arguments for tool t failed: ")
    assert "'/$defs/missing' does not exist" in text


def test_an_unknown_dollar_schema_falls_back_to_2020_12_without_a_warning() -> None:
    schema = {
        "$schema": "https://example.com/my-own-draft",
        "type": "object",
        "properties": {"pair": {"type": "array", "prefixItems": [{"type": "integer"}]}},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert problems(schema, {"pair": ["one"]}) == [
            "  - pair[0]: Input should be a valid integer"
        ]


def test_a_tool_s_schema_is_checked_once_and_again_when_it_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jsonschema import validators

    checked: list[Any] = []
    real = validators.validator_for

    def counting(schema: Any, default: Any = None) -> Any:
        checked.append(schema)
        return real(schema, default=default)

    monkeypatch.setattr(validators, "validator_for", counting)
    first, second = field({"type": "integer"}), field({"type": "string"})
    one = tool(first)
    for _ in range(3):
        assert validate_arguments(one, {"x": 1}).x == 1
    assert [s for s in checked if s in (first, second)] == [first]
    one.parameters = second  # e.g. the server's tools/list changed
    with pytest.raises(ArgumentsError, match="x: Input should be a valid string"):
        validate_arguments(one, {"x": 1})
    assert validate_arguments(one, {"x": "s"}).x == "s"
    assert [s for s in checked if s in (first, second)] == [first, second]


def test_problems_inside_a_value_of_an_unnamed_property_are_at_its_path() -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "integer"}},
        "additionalProperties": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    assert problems(schema, {"zz": {"n": "x"}, "aa": {"n": "y"}, "b": "s"}) == [
        "  - b: Input should be a valid integer",
        "  - aa.n: Input should be a valid integer",
        "  - zz.n: Input should be a valid integer",
    ]
