"""Forms built from the JSON Schema constructs real servers send, and every button of
every MCP dialog clicked (not only their keys)."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types
from textual.app import App
from textual.widgets import Checkbox, Input, OptionList, Select, SelectionList, TextArea

from tests.widgets.helpers import wait_for
from workbench.agent import AgentTool
from workbench.mcp.requests import WRITTEN
from workbench.widgets.hand_call import HandCallModal, ToolPickerModal
from workbench.widgets.json_editor import JsonEditModal
from workbench.widgets.mcp_catalog import ArgumentsModal
from workbench.widgets.mcp_requests import AppAsker, ElicitationModal, SamplingModal
from workbench.widgets.schema_form import SchemaForm

EVERYTHING: dict[str, Any] = {
    "type": "object",
    "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
    "properties": {
        "color": {"type": "string", "enum": ["red", "green"]},  # no default: crashed
        "size": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
        "tone": {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]},
        "level": {"oneOf": [{"const": 1, "title": "one"}, {"const": 2, "title": "two"}]},
        "gear": {
            "type": "array",
            "items": {"type": "string", "enum": ["Guitar", "Drums", "Bass"]},
            "default": ["Guitar"],
        },
        "owner": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name"],
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "place": {"$ref": "#/$defs/Place"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "loud": {"type": "boolean"},
        "ok": {"type": "boolean"},
        "count": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number", "default": 2},  # a whole number stays one
    },
    "required": ["color", "ok", "owner"],
}


async def click(pilot: Any, selector: str) -> None:
    """Scroll the widget into view, as a person would, then click it (once a button
    clicked just before is clickable again: it ignores clicks while it flashes)."""
    widget = pilot.app.screen.query_one(selector)
    await wait_for(pilot, lambda: not widget.has_class("-active"))
    widget.scroll_visible(animate=False, immediate=True)
    await pilot.pause()
    await pilot.click(selector)


class Host(App[None]):
    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.modal = screen
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.modal, self.results.append)


def elicitation(schema: dict[str, Any]) -> ElicitationModal:
    params = mcp_types.ElicitRequestFormParams(mode="form", message="fill", requested_schema=schema)
    return ElicitationModal("srv", params)


async def test_every_construct_makes_a_field_and_reads_back_in_its_type() -> None:
    app = Host(elicitation(EVERYTHING))
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ElicitationModal)
        form = modal.query_one(SchemaForm)
        # left alone: the defaults, and nothing for the optional fields without one
        assert form.values() == {
            "size": "m",
            "gear": ["Guitar"],
            "owner": {},
            "ok": False,
            "ratio": 2,
        }
        assert type(form.values()["ratio"]) is int  # not 2.0
        assert modal.query_one("#f-0", Select).value == Select.NULL
        labels = [str(o[0]) for o in modal.query_one("#f-2", Select)._options]
        assert labels[1:] == ["Alpha", "Beta"]
        modal.query_one("#f-0", Select).value = 1
        modal.query_one("#f-2", Select).value = 0
        modal.query_one("#f-3", Select).value = 1
        gear = modal.query_one("#f-4", SelectionList)
        gear.select(2)
        modal.query_one("#f-5-0", Input).value = "Ann"
        modal.query_one("#f-5-1", Input).value = "41"
        await click(pilot, "#f-6-add")
        await click(pilot, "#f-6-add")
        await wait_for(pilot, lambda: len(modal.query("#f-6 Input")) == 2)
        modal.query_one("#f-6-i0", Input).value = "x"
        modal.query_one("#f-6-i1", Input).value = "y"
        await click(pilot, "#f-6-i0-remove")
        await wait_for(pilot, lambda: len(modal.query("#f-6 Input")) == 1)
        modal.query_one("#f-7-0", Input).value = "Oslo"
        modal.query_one("#f-9", Select).value = 1  # the optional flag, set to false
        modal.query_one("#f-10", Checkbox).value = True
        modal.query_one("#f-11", Input).value = "3"
        modal.query_one("#f-12", Input).value = "2.5"
        await click(pilot, "#accept")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [
        (
            "accept",
            {
                "color": "green",
                "size": "m",
                "tone": "a",
                "level": 2,
                "gear": ["Guitar", "Bass"],
                "owner": {"name": "Ann", "age": 41},
                "tags": ["y"],
                "place": {"city": "Oslo"},
                "loud": False,
                "ok": True,
                "count": 3,
                "ratio": 2.5,
            },
        )
    ]


async def test_a_required_multi_select_and_nested_field_are_checked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pick": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1},
            "owner": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
        "required": ["pick", "owner"],
    }
    app = Host(elicitation(schema))
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        modal = app.screen
        await click(pilot, "#accept")
        await pilot.pause()
        error = str(modal.query_one("#elicit-error").render())
        assert "owner: 'name' is a required property" in error
        assert "pick: [] should be non-empty" in error
        assert not app.results
        modal.query_one("#f-0", SelectionList).select(1)
        modal.query_one("#f-1-0", Input).value = "Bo"
        await click(pilot, "#accept")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [("accept", {"pick": ["b"], "owner": {"name": "Bo"}})]


async def test_elicitation_buttons_decline_and_cancel() -> None:
    for button, action in (("#decline", "decline"), ("#cancel", "cancel")):
        app = Host(elicitation(EVERYTHING))
        async with app.run_test(size=(120, 60)) as pilot:
            await pilot.pause()
            await click(pilot, button)
            await wait_for(pilot, lambda app=app: bool(app.results))
        assert app.results == [(action, None)]


def sampling_params(**extra: Any) -> mcp_types.CreateMessageRequestParams:
    message = mcp_types.SamplingMessage(
        role="user", content=mcp_types.TextContent(type="text", text="hi")
    )
    return mcp_types.CreateMessageRequestParams(messages=[message], max_tokens=5, **extra)


async def generate(
    params: mcp_types.CreateMessageRequestParams, model: str | None = None
) -> mcp_types.CreateMessageResult:
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(type="text", text=f"reply to {len(params.messages)}"),
        model=model or "default",
        stop_reason="endTurn",
    )


async def test_sampling_buttons_generate_approve_decline_and_cancel() -> None:
    params = sampling_params(
        temperature=0.2,
        stop_sequences=["END"],
        model_preferences=mcp_types.ModelPreferences(
            hints=[mcp_types.ModelHint(name="claude-3-sonnet")], speed_priority=0.8
        ),
    )
    app = Host(SamplingModal("srv", params, generate, model="m1", configurable=True))
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        shown = str(app.screen.query_one("#sample-parameters").render())
        assert "maxTokens 5: sent with the request" in shown
        assert "temperature 0.2: sent with the request" in shown
        assert "stopSequences 'END'" in shown
        assert "hints claude-3-sonnet; speed 0.8 (you pick the model)" in shown
        app.screen.query_one("#sample-model", Input).value = "m2"
        await click(pilot, "#generate")
        reply = app.screen.query_one("#sample-reply", TextArea)
        await wait_for(pilot, lambda: reply.text == "reply to 1")
        await click(pilot, "#accept")
        await wait_for(pilot, lambda: bool(app.results))
    action, result = app.results[0]
    assert action == "accept" and result.model == "m2"  # generated, approved as it was

    app = Host(SamplingModal("srv", sampling_params(), generate, model="m1"))
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause()
        assert "not supported by this provider" in str(
            app.screen.query_one("#sample-parameters").render()
        )
        app.screen.query_one("#sample-reply", TextArea).text = "my own answer"
        await click(pilot, "#accept")
        await wait_for(pilot, lambda: bool(app.results))
    action, result = app.results[0]
    assert result.model == WRITTEN and result.content.text == "my own answer"

    for button, expected in (("#decline", "decline"), ("#cancel", "cancel")):
        app = Host(SamplingModal("srv", sampling_params(), generate))
        async with app.run_test(size=(120, 50)) as pilot:
            await pilot.pause()
            await click(pilot, button)
            await wait_for(pilot, lambda app=app: bool(app.results))
        assert app.results == [(expected, None)]


async def test_a_sampling_dialog_whose_request_is_cancelled_closes_and_runs_nothing() -> None:
    ran: list[object] = []

    async def run(params: Any, model: str | None = None) -> Any:
        ran.append(params)
        return await generate(params, model)

    class AskingHost(App[None]):
        pass

    app = AskingHost()
    async with app.run_test(size=(120, 50)) as pilot:
        asker = AppAsker(app)
        outcome: list[object] = []

        async def ask() -> None:
            try:
                outcome.append(await asker.sample("srv", sampling_params(), run))
            except asyncio.CancelledError:
                outcome.append("cancelled")

        task = asyncio.create_task(ask())
        await wait_for(pilot, lambda: isinstance(app.screen, SamplingModal))
        modal = app.screen
        task.cancel()  # as the SDK does when the server cancels its request
        await wait_for(pilot, lambda: not isinstance(app.screen, SamplingModal))
        modal.action_accept()  # too late: nothing runs
        await modal.run_action("generate")
        await pilot.pause()
    assert outcome == ["cancelled"] and ran == []


async def test_prompt_argument_buttons_send_and_cancel() -> None:
    fields = [("code", "the code", True), ("focus", "", False)]
    app = Host(ArgumentsModal("Prompt review", fields))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await click(pilot, "#accept")  # refused: code is required
        await pilot.pause()
        assert "'code' is a required property" in str(app.screen.query_one("#args-error").render())
        app.screen.query_one("#f-0", Input).value = "x = 1"
        await click(pilot, "#accept")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [{"code": "x = 1"}]
    app = Host(ArgumentsModal("Prompt review", fields))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await click(pilot, "#cancel")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [None]


def tool(schema: dict[str, Any]) -> AgentTool:
    async def execute(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("not run here")

    return AgentTool(name="pick", label="pick", description="", parameters=schema, execute=execute)


async def test_hand_call_buttons_run_raw_json_and_cancel() -> None:
    schema = {
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["fast", "slow"]}},
        "required": ["mode"],
    }
    app = Host(HandCallModal(tool(schema)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await click(pilot, "#run")  # refused: mode is required
        await pilot.pause()
        assert "'mode' is a required property" in str(app.screen.query_one("#hand-error").render())
        app.screen.query_one("#f-0", Select).value = 1
        await click(pilot, "#run")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [{"mode": "slow"}]

    app = Host(HandCallModal(tool(schema)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.query_one("#f-0", Select).value = 0
        await click(pilot, "#raw")
        await wait_for(pilot, lambda: isinstance(app.screen, JsonEditModal))
        await click(pilot, "#apply")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [{"mode": "fast"}]

    app = Host(HandCallModal(tool(schema)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await click(pilot, "#cancel")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == [None]


async def test_the_tool_picker_filters_as_you_type() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    tools = [tool(schema), tool(schema)]
    tools[1].name = "read_note"
    tools[1].description = "Reads a note"
    app = Host(ToolPickerModal(tools))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        listing = app.screen.query_one(OptionList)
        assert listing.option_count == 2
        await pilot.press(*"note")
        await wait_for(pilot, lambda: listing.option_count == 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results == ["read_note"]


EVERYTHING_ELICITATION: dict[str, Any] = {
    # server-everything's trigger-elicitation-request (abridged descriptions)
    "type": "object",
    "properties": {
        "name": {"title": "String", "type": "string"},
        "check": {"title": "Boolean", "type": "boolean"},
        "firstLine": {"type": "string", "default": "It was a dark and stormy night."},
        "email": {"type": "string", "format": "email"},
        "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
        "untitledSingleSelectEnum": {
            "type": "string",
            "enum": ["Monica", "Rachel", "Joey"],
            "default": "Monica",
        },
        "untitledMultipleSelectEnum": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin"]},
            "default": ["Guitar"],
        },
        "titledSingleSelectEnum": {
            "type": "string",
            "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2"}],
            "default": "hero-1",
        },
        "titledMultipleSelectEnum": {
            "type": "array",
            "minItems": 1,
            "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2"}]},
            "default": ["fish-1"],
        },
        "legacyTitledEnum": {
            "type": "string",
            "enum": ["pet-1", "pet-2"],
            "enumNames": ["Cats", "Dogs"],
            "default": "pet-1",
        },
    },
    "required": ["name"],
}


async def test_server_everythings_elicitation_form_opens_with_its_defaults() -> None:
    app = Host(elicitation(EVERYTHING_ELICITATION))
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        form = app.screen.query_one(SchemaForm)
        values = form.values()
        assert values == {
            "firstLine": "It was a dark and stormy night.",
            "integer": 42,
            "number": 3.14,
            "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"],  # a list, not "['Guitar']"
            "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-1",
        }
        assert form.problems(values) == ["form: 'name' is a required property"]
        titled = [str(o[0]) for o in app.screen.query_one("#f-8", Select)._options]
        assert titled[1:] == ["Superman", "hero-2"]
        app.screen.query_one("#f-0", Input).value = "Ann"
        await click(pilot, "#accept")
        await wait_for(pilot, lambda: bool(app.results))
    assert app.results[0][1]["name"] == "Ann"
