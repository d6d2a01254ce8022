"""The argument pipeline: parse -> lookup -> prepare -> validate, each failure an
error result naming its stage, and the tool_arguments event that shows it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator

from tests.agent.helpers import FakeStream, NoArgs, assistant, call, make_tool, run_loop, text_of
from workbench.agent import (
    BeforeToolCallContext,
    ToolArgumentsEvent,
    format_validation_error,
    run_argument_pipeline,
)


class Edit(BaseModel):
    old_text: str
    new_text: str


class EditParams(BaseModel):
    path: str
    edits: list[Edit]
    count: int = Field(default=1, ge=1)


EDIT = make_tool("edit", params=EditParams)
ECHO = make_tool("echo")


# -- the stages, one at a time -------------------------------------------------------


def test_valid_raw_arguments_go_through_every_stage() -> None:
    raw = '{"path": "a.txt", "edits": [{"old_text": "x", "new_text": "y"}]}'
    outcome = run_argument_pipeline(call("c", "edit", raw=raw), [ECHO, EDIT])
    assert outcome.error is None and outcome.tool is EDIT
    assert outcome.parsed == json.loads(raw) == outcome.prepared
    assert isinstance(outcome.validated, EditParams) and outcome.validated.count == 1
    event = outcome.event()
    assert isinstance(event, ToolArgumentsEvent)
    assert (event.raw, event.failed_stage, event.error, event.edited) == (raw, None, None, False)
    assert outcome.event(edited=True).edited is True
    assert event.validated == {
        "path": "a.txt",
        "edits": [{"old_text": "x", "new_text": "y"}],
        "count": 1,
    }


def test_without_raw_string_the_parsed_arguments_are_used() -> None:
    outcome = run_argument_pipeline(call("c", "echo", {"value": "v"}), [ECHO])
    assert outcome.parsed == {"value": "v"} and outcome.error is None
    assert outcome.event().raw is None


def test_empty_raw_string_means_no_arguments() -> None:
    outcome = run_argument_pipeline(call("c", "echo", raw="  "), [make_tool("echo", params=NoArgs)])
    assert outcome.parsed == {} and outcome.error is None


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"value": "x"', "line 1 column 14 (char 13)"),
        ('{"value": }', "line 1 column 11 (char 10)"),
        ('{\n  "value": "x",\n}', "line 3 column 1 (char 18)"),
    ],
)
def test_malformed_json_error_names_the_position_and_shows_the_raw_string(
    raw: str, where: str
) -> None:
    outcome = run_argument_pipeline(call("c", "echo", raw=raw), [ECHO])
    assert outcome.error is not None and outcome.error.stage == "parse"
    message = str(outcome.error)
    assert message.startswith("Invalid JSON in arguments for tool echo:")
    assert where in message
    assert message.endswith(f"Received arguments:\n{raw}")
    assert outcome.parsed is None and outcome.validated is None
    event = outcome.event()
    assert event.failed_stage == "parse" and event.raw == raw and event.parsed is None


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("[1, 2]", "an array"),
        ('"s"', "a string"),
        ("3", "a number"),
        ("null", "null"),
        ("true", "a boolean"),
    ],
)
def test_json_that_is_not_an_object_fails_parsing(raw: str, kind: str) -> None:
    outcome = run_argument_pipeline(call("c", "echo", raw=raw), [ECHO])
    assert outcome.error is not None and outcome.error.stage == "parse"
    assert str(outcome.error) == (
        f"Arguments for tool echo must be a JSON object, got {kind}\n\nReceived arguments:\n{raw}"
    )


def test_json_nested_too_deeply_fails_parsing_that_call_only() -> None:
    raw = '{"value": ' + "[" * 150 + "]" * 150 + "}"
    outcome = run_argument_pipeline(call("c", "echo", raw=raw), [ECHO])
    assert outcome.error is not None and outcome.error.stage == "parse"
    assert str(outcome.error) == (
        "Arguments for tool echo are not usable: JSON nested 151 levels deep (the limit is 100)"
    )


def test_unknown_tool_fails_lookup() -> None:
    outcome = run_argument_pipeline(call("c", "nope", {"a": 1}), [ECHO, EDIT])
    assert outcome.error is not None and outcome.error.stage == "lookup"
    assert str(outcome.error) == "Tool nope not found"
    assert outcome.parsed == {"a": 1} and outcome.tool is None
    assert outcome.event().failed_stage == "lookup"


def test_prepare_arguments_raising_fails_the_prepare_stage() -> None:
    def prepare(args: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("cannot reshape")

    tool = make_tool("echo", prepare=prepare)
    outcome = run_argument_pipeline(call("c", "echo", {"value": "v"}), [tool])
    assert outcome.error is not None and outcome.error.stage == "prepare"
    assert str(outcome.error) == "Preparing arguments for tool echo failed: cannot reshape"
    assert outcome.parsed == {"value": "v"} and outcome.prepared is None


def test_prepare_arguments_returning_a_non_object_fails_the_prepare_stage() -> None:
    tool = make_tool("echo", prepare=lambda args: ["not", "a", "dict"])  # type: ignore[arg-type,return-value]
    outcome = run_argument_pipeline(call("c", "echo", {"value": "v"}), [tool])
    assert outcome.error is not None and outcome.error.stage == "prepare"
    assert str(outcome.error) == "prepare_arguments of tool echo returned list, not an object"


def test_validation_error_lists_every_failing_field_path_then_the_arguments() -> None:
    args = {"edits": [{"old_text": 1}, {"old_text": "a", "new_text": "bé"}], "count": 0}
    outcome = run_argument_pipeline(call("c", "edit", args), [EDIT])
    assert outcome.error is not None and outcome.error.stage == "validate"
    message = str(outcome.error)
    head, received = message.split("\n\nReceived arguments:\n")
    lines = head.splitlines()
    assert lines[0] == 'Validation failed for tool "edit":'
    paths = [line.split(":")[0].strip(" -") for line in lines[1:]]
    assert paths == ["path", "edits[0].old_text", "edits[0].new_text", "count"]
    assert "Field required" in lines[1]
    assert "valid string" in lines[2]
    assert "greater than or equal to 1" in lines[4]
    assert json.loads(received) == args
    # indented as pi shows them, characters as the model wrote them
    assert '\n      "new_text": "bé"\n' in received
    event = outcome.event()
    assert event.failed_stage == "validate" and event.prepared == args and event.validated is None


def test_validation_error_of_the_root_is_called_root() -> None:
    class Strict(BaseModel):
        model_config = {"extra": "forbid"}
        a: int = 0

    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        Strict.model_validate({"b": 1})
    text = format_validation_error("strict", info.value, {"b": 1})
    assert "  - b: Extra inputs are not permitted" in text

    class Listy(BaseModel):
        items: list[int]

    outcome = run_argument_pipeline(
        call("c", "l", {"items": [1, "x"]}), [make_tool("l", params=Listy)]
    )
    assert "  - items[1]: " in str(outcome.error)


def test_validator_raising_an_unexpected_exception_fails_validation() -> None:
    class Picky(BaseModel):
        value: str

        @field_validator("value")
        @classmethod
        def explode(cls, v: str) -> str:
            raise TypeError("unexpected failure inside a validator")

    outcome = run_argument_pipeline(
        call("c", "picky", {"value": "v"}), [make_tool("picky", params=Picky)]
    )
    assert outcome.error is not None and outcome.error.stage == "validate"
    assert str(outcome.error) == (
        "Validating arguments for tool picky failed: unexpected failure inside a validator"
    )


def test_parse_comes_before_lookup() -> None:
    outcome = run_argument_pipeline(call("c", "nope", raw="{oops"), [ECHO])
    assert outcome.error is not None and outcome.error.stage == "parse"


# -- in the loop ---------------------------------------------------------------------


async def test_each_failing_stage_is_an_error_result_and_execute_never_runs() -> None:
    log: list[str] = []

    def prepare(args: dict[str, Any]) -> dict[str, Any]:
        if args.get("value") == "boom":
            raise RuntimeError("prepare exploded")
        return args

    tool = make_tool("echo", prepare=prepare, log=log)
    reply = assistant(
        call("p", "echo", raw='{"value": "x"'),
        call("l", "ghost", {"value": "x"}),
        call("r", "echo", {"value": "boom"}),
        call("v", "echo", {"value": 42}),
        call("ok", "echo", {"value": "fine"}),
    )
    stream = FakeStream(reply, assistant("done"))
    run = await run_loop(stream, [tool])

    assert log == ["fine"]
    results = {m.tool_call_id: m for m in run.messages if m.role == "toolResult"}
    assert [results[i].is_error for i in ["p", "l", "r", "v", "ok"]] == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert "Invalid JSON" in text_of(results["p"]) and "column" in text_of(results["p"])
    assert text_of(results["l"]) == "Tool ghost not found"
    assert "prepare exploded" in text_of(results["r"])
    assert text_of(results["v"]).startswith('Validation failed for tool "echo":\n  - value: ')
    stages = {e.tool_call_id: e.failed_stage for e in run.rec.of("tool_arguments")}
    assert stages == {"p": "parse", "l": "lookup", "r": "prepare", "v": "validate", "ok": None}
    # the model sees the errors on its next request
    sent = stream.requests[1].context.messages
    assert [m.tool_call_id for m in sent if m.role == "toolResult"] == ["p", "l", "r", "v", "ok"]


async def test_tool_arguments_event_comes_after_start_and_before_the_before_hook() -> None:
    order: list[str] = []

    async def on_event(event: Any) -> None:
        if event.type in ("tool_execution_start", "tool_arguments", "tool_execution_end"):
            order.append(event.type)

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        order.append("before_tool_call")

    from tests.agent.helpers import Recorder

    await run_loop(
        FakeStream(assistant(call("t", args={"value": "v"})), assistant("done")),
        [make_tool()],
        before_tool_call=before,
        rec=Recorder(on_event),
    )
    assert order == [
        "tool_execution_start",
        "tool_arguments",
        "before_tool_call",
        "tool_execution_end",
    ]


async def test_before_tool_call_is_not_called_for_calls_that_failed_the_pipeline() -> None:
    called: list[str] = []
    reply = assistant(call("bad", "echo", {"value": 1}), call("missing", "nope", {}))
    await run_loop(
        FakeStream(reply, assistant("done")),
        [make_tool()],
        before_tool_call=lambda ctx, s: called.append(ctx.tool_call.id),
    )
    assert called == []


async def test_raw_arguments_take_precedence_over_provider_parsed_arguments() -> None:
    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        seen.append(params.value)
        return "ok"

    from workbench.agent import ToolCall

    odd = ToolCall(
        id="t", name="echo", arguments={"value": "stale"}, raw_arguments='{"value": "exact"}'
    )
    run = await run_loop(
        FakeStream(assistant(odd), assistant("done")), [make_tool(execute=execute)]
    )
    assert seen == ["exact"]
    (event,) = run.rec.of("tool_arguments")
    assert event.raw == '{"value": "exact"}' and event.parsed == {"value": "exact"}


async def test_validated_values_that_json_cannot_hold_are_shown_by_repr() -> None:
    from pydantic import ConfigDict

    class Handle:
        def __init__(self, name: str) -> None:
            self.name = name

        def __repr__(self) -> str:
            return f"Handle({self.name!r})"

    class Params(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        value: Handle | str

        @field_validator("value")
        @classmethod
        def wrap(cls, v: Any) -> Handle:
            return Handle(v)

    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        seen.append(params.value.name)
        return "ok"

    tool = make_tool("h", execute, params=Params)
    run = await run_loop(
        FakeStream(assistant(call("t", "h", {"value": "x"})), assistant("done")), [tool]
    )
    assert seen == ["x"]
    (event,) = run.rec.of("tool_arguments")
    assert event.validated == {"value": "Handle('x')"} and event.failed_stage is None
