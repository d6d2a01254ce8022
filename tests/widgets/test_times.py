"""Pilot tests: a call's time is its work; waiting (approval, pause, queue) is shown apart."""

from __future__ import annotations

import html
import re

import anyio

from tests.widgets.helpers import blocking_tools, scenario_of, send, wait_for
from workbench.agent.clock import now_ms
from workbench.view.summary import phase_durations
from workbench.widgets.permission_modal import PermissionModal


def screen_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    """What the terminal shows, line by line (dialogs and what is under them)."""
    svg = app.export_screenshot()
    text = html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
    return [line for line in text.splitlines() if line.strip()]


def card_line(app, words: str) -> str:  # type: ignore[no-untyped-def]
    """The first screen line holding `words` ("" while there is none yet)."""
    return next((line for line in screen_lines(app) if words in line), "")


WAIT = re.compile(r"(\d+(?:\.\d+)?)(µs|ms|s) \+(\d+(?:\.\d+)?)(ms|s) wait")


CARD = "Write file write_file"
"""The timeline card of the call (the spaces before its time depend on how many digits
the time has, so the card is found by its title)."""


def wait_seconds(line: str) -> float:
    match = WAIT.search(line)
    assert match, f"no '+… wait' in {line!r}"
    return float(match.group(3)) / (1000 if match.group(4) == "ms" else 1)


async def test_a_call_that_waited_for_you_shows_its_work_and_its_wait_and_ticks_under_the_dialog(
    make_test_app,
) -> None:
    turns = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
        {"text": "ok"},
    ]
    app = make_test_app(scenario_of(turns))
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        # The user reads the dialog for a while: the wait ticks on the card behind it.
        await anyio.sleep(0.3)
        await wait_for(pilot, lambda: WAIT.search(card_line(app, CARD)))
        first = wait_seconds(card_line(app, CARD))
        await anyio.sleep(0.6)
        await wait_for(
            pilot,
            lambda: (
                WAIT.search(card_line(app, CARD)) and wait_seconds(card_line(app, CARD)) > first
            ),
        )
        inspector_head = "\n".join(app.inspector.plain_lines()[:2])
        assert "wait" in inspector_head  # the inspector's time ticks under the dialog too
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        await pilot.pause()
        line = card_line(app, "✓ done")
        work, waited = app.view_state.calls["call_1_1"].times(0)
    assert waited >= 900 and work < 300  # the wait is not counted as work
    assert wait_seconds(line) >= 0.9 and re.search(r"\d+(µs|ms) \+", line)


def warned(app, words: str) -> bool:  # type: ignore[no-untyped-def]
    """The card's time is drawn as the slow-call warning (reversed)."""
    timeline = app.timeline
    for y in range(timeline.size.height):
        strip = timeline.render_line(y)
        if words in strip.text:
            return any(s.style is not None and s.style.reverse for s in strip)
    raise AssertionError(f"no card line with {words!r}")


async def test_the_slow_warning_counts_execution_not_waiting_for_approval(
    make_test_app, tmp_path
) -> None:
    release, tools = blocking_tools()
    turns = [
        {"tool_calls": [{"name": "slow", "arguments": {}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
        {"text": "ok"},
    ]
    from workbench.tools import builtin_tools

    app = make_test_app(
        scenario_of(turns), tools=[*tools, *builtin_tools(tmp_path)], allow=["slow"], slow_after=0.1
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await send(
            pilot,
            app,
            lambda: (
                app.view_state.calls.get("call_1_1") is not None
                and app.view_state.calls["call_1_1"].status == "running"
            ),
        )
        await anyio.sleep(0.25)
        await wait_for(pilot, lambda: warned(app, "▶ running"))  # executing for longer than 0.1s
        release.set()
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
        await anyio.sleep(0.3)  # waiting on the user three times the slow threshold
        app.screen.dismiss(None)  # look at the timeline behind the dialog
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionModal))
        ticks = app._ticks
        await wait_for(pilot, lambda: app._ticks >= ticks + 2)  # two ticks of the clock
        assert not warned(app, "awaiting approval")


async def test_lanes_draw_a_call_queued_behind_a_sibling_awaiting_approval(
    make_test_app, tmp_path
) -> None:
    _release, tools = blocking_tools()
    turns = [
        {
            "tool_calls": [
                {"name": "fast", "arguments": {}},
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}},
            ]
        },
        {"text": "ok"},
    ]
    from workbench.tools import builtin_tools

    app = make_test_app(
        scenario_of(turns), tools=[*tools, *builtin_tools(tmp_path)], allow=["fast"]
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        await anyio.sleep(0.2)
        app.select_call("call_1_1")  # the ready call, behind the dialog
        await pilot.pause()
        lanes = app.inspector.section_text("Batch lanes")
        fast = app.view_state.calls["call_1_1"]
        assert fast.status == "validated"
        assert phase_durations(fast, now_ms())["queued"] >= 150
        fast_lane = next(line for line in lanes.splitlines() if "fast" in line)
        assert (
            "·" in fast_lane and "░" not in fast_lane.split("·", 1)[1]
        )  # not "preflight" all along
        assert "queued" in lanes  # in the legend and the durations line
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
