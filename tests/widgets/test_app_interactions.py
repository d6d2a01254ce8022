"""Pilot tests: stepping, selecting calls, steering while running, literal text."""

from __future__ import annotations

import re

import anyio

from tests.widgets.helpers import scenario_of, send, wait_for
from workbench.agent import ToolResultMessage, UserMessage, tool
from workbench.widgets.inject_modal import InjectResultModal
from workbench.widgets.pause_banner import PauseBanner

TWO_READS = [
    {
        "text": "reading",
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": "a.txt"}},
            {"name": "list_directory", "arguments": {"path": "."}},
        ],
    },
    {"text": "done"},
]


async def test_step_mode_pauses_and_step_then_continue_finishes(make_test_app) -> None:
    app = make_test_app(scenario_of(TWO_READS, workspace_files={"a.txt": "hello"}))
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("f6")
        await wait_for(pilot, lambda: app.view_state.step_mode)
        await send(pilot, app, lambda: app.view_state.pause is not None)
        assert app.view_state.pause.point == "before_model"
        assert app.view_state.run_state == "paused"
        assert app.query_one(PauseBanner).has_class("-shown")
        await pilot.press("f10")
        await wait_for(
            pilot,
            lambda: (
                app.view_state.pause is not None and app.view_state.pause.point == "before_tool"
            ),
        )
        assert app.view_state.pause.tool_name == "read_file"
        assert app.view_state.calls[app.view_state.pause.tool_call_id].status == "paused"
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        assert not app.query_one(PauseBanner).has_class("-shown")
        assert not app.view_state.step_mode
    assert [c.status for c in app.view_state.calls.values()] == ["done", "done"]


async def test_answering_a_paused_call_injects_the_result(make_test_app) -> None:
    app = make_test_app(
        scenario_of(TWO_READS, workspace_files={"a.txt": "hello"}), breakpoints=["read_file"]
    )
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, lambda: app.view_state.pause is not None)
        assert app.view_state.pause.breakpoint == "read_file"
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, InjectResultModal))
        app.screen.query_one("#result-text").text = "pretend contents"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    record = next(c for c in app.view_state.calls.values() if c.name == "read_file")
    assert record.injected and record.result_text == "pretend contents"
    message = next(
        m
        for m in app.agent.state.messages
        if isinstance(m, ToolResultMessage) and m.tool_name == "read_file"
    )
    assert message.injected and message.text == "pretend contents"


async def test_selecting_a_card_shows_it_in_the_inspector(make_test_app) -> None:
    app = make_test_app(scenario_of(TWO_READS, workspace_files={"a.txt": "hello"}))
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        timeline = app.timeline
        first, second = timeline.batches()[0]
        assert [app.view_state.calls[i].name for i in (first, second)] == [
            "read_file",
            "list_directory",
        ]
        assert app.inspector.record.name == "list_directory"  # follows the newest call
        assert timeline.selected_id == second
        line = timeline.line_of(first)
        assert timeline.plain_lines()[line].lstrip().startswith("▌Read file")
        await pilot.click(
            timeline, offset=(5, line - int(timeline.scroll_y))
        )  # the card's first line
        await pilot.pause()
        assert app.inspector.record.name == "read_file"
        assert timeline.selected_id == first and timeline.has_focus
        await pilot.press("down")
        await pilot.pause()
        assert app.inspector.record.name == "list_directory"
        assert timeline.selected_id == second
        await pilot.press("up", "up")  # stops at the first call
        await pilot.pause()
        assert timeline.selected_id == first
        result = app.inspector.section_text("Result")
        assert result.startswith("Result  (is_error=False)") and "a.txt" in result
        await wait_for(pilot, lambda: app.pacer.inspect_cost > 0)  # what showing a call costs
        record = app.inspector.record
        assert not app.inspector.show(
            record, "", 0.0, batch=app.view_state.batch_of(record)
        )  # unchanged


async def test_showing_another_call_lays_out_nothing(make_test_app) -> None:
    """The inspector is drawn line by line: a call of another shape repaints it, and
    the screen is not laid out again (a layout and its repaint are the costly part of
    showing a call; see benchmarks/README.md)."""
    from textual.screen import Screen

    app = make_test_app(scenario_of(TWO_READS, workspace_files={"a.txt": "hello"}))
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        await wait_for(pilot, lambda: not app._refresh_pending)
        layouts: list[int] = []
        original = Screen._refresh_layout

        def counted(screen, *args, **kwargs):  # type: ignore[no-untyped-def]
            layouts.append(1)
            return original(screen, *args, **kwargs)

        first, second = app.timeline.batches()[0]
        try:
            Screen._refresh_layout = counted  # type: ignore[method-assign]
            for call_id in (first, second, first):
                app.select_call(call_id)
                await pilot.pause()
                await pilot.pause()
                name = app.view_state.calls[call_id].name
                assert app.inspector.plain_lines()[0].startswith(name)
        finally:
            Screen._refresh_layout = original  # type: ignore[method-assign]
        assert layouts == []
        assert "hello" in app.inspector.section_text("Result")  # read_file's result, shown


async def test_steering_while_running_is_queued_then_delivered(make_test_app) -> None:
    release = anyio.Event()

    @tool
    async def wait_for_release() -> str:
        """Block until the test releases it."""
        await release.wait()
        return "released"

    turns = [
        {"tool_calls": [{"name": "wait_for_release", "arguments": {}}]},
        {"text": "after steering"},
        {"text": "final"},
    ]
    app = make_test_app(scenario_of(turns), tools=[wait_for_release], allow=["wait_for_release"])
    async with app.run_test(size=(140, 44)) as pilot:
        app.prompt_bar.input.value = "start"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any(c.status == "running" for c in app.view_state.calls.values())
        )
        app.prompt_bar.input.value = "also check the README"
        await pilot.press("enter")
        assert app.agent.queued[0][0].content == "also check the README"
        assert app.query_one("#queue").has_class("-shown")
        release.set()
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        assert not app.query_one("#queue").has_class("-shown")
    users = [m for m in app.agent.state.messages if isinstance(m, UserMessage)]
    assert [u.content for u in users] == ["start", "also check the README"]
    steering = [i for i in app.view_state.items if i.kind == "user" and i.steering]
    assert [i.text for i in steering] == ["also check the README"]
    assert app.agent.state.messages[-1].text == "after steering"


async def test_untrusted_text_is_shown_literally(make_test_app) -> None:
    nasty = "[bold red]not markup[/] \x1b[31mnot an escape\x1b[0m"
    scenario = scenario_of(
        [
            {"text": nasty, "tool_calls": [{"name": "web_search", "arguments": {"q": nasty}}]},
            {"text": "ok"},
        ]
    )
    app = make_test_app(scenario)
    async with app.run_test(size=(160, 44)) as pilot:
        app.prompt_bar.input.value = nasty
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        lines = app.timeline.plain_lines()
        card = lines[app.timeline.line_of(app.timeline.batches()[0][0])]
        assert "[bold red]not markup[/]" in card and "\x1b" not in card
        user = next(line for line in lines if "you " in line)
        assert "[bold red]not markup[/]" in user and "␛[31m" in user
        reply = next(line for line in lines if "not an escape" in line and "you " not in line)
        assert "␛[31m" in reply
        assert not any("\x1b" in line for line in lines)


async def test_the_inspector_lists_a_calls_history_in_order_with_offsets(make_test_app) -> None:
    app = make_test_app(scenario_of(TWO_READS, workspace_files={"a.txt": "hello"}))
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        first, _ = app.timeline.batches()[0]
        app.select_call(first)
        await pilot.pause()
        title, *lines = app.inspector.section_text("Events").splitlines()
        assert title == "Events"
        rows = [re.fullmatch(r"\s*\+\s*(\S+)  (.*)", line).groups() for line in lines]
        assert rows[0][0] == "0µs"  # offsets from the call's first event
        labels = [label for _, label in rows]
        assert labels == [
            "preflight started",
            "arguments validated",
            "allow (rule: read_file)",
            "executing",
            "ended  hello",
            "result sent to the model",
        ]  # "ended" carries the result's first line
