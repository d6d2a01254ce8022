"""Keys on a long timeline cost the same however many calls the session holds: ↑/↓ and
`T` look at the cards around the selection, not at every call. Work is counted, not
timed: the lines of timeline key code run (`sys.settrace`) and the cards looked at."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import workbench.widgets.timeline
import workbench.widgets.timeline_input
from tests.widgets.helpers import scenario_of, wait_for
from workbench.agent import tool

TURNS, CALLS = 40, 8  # 320 calls: walking all of them is far above any bound below


@tool
async def quick(n: int) -> str:
    """Return at once."""
    return f"done {n}"


def long_session():  # type: ignore[no-untyped-def]
    turn = {
        "thinking": "The user wants every file listed.",
        "text": "Listing.",
        "tool_calls": [{"name": "quick", "arguments": {"n": n}} for n in range(CALLS)],
    }
    return scenario_of([turn] * TURNS + [{"text": "done"}])


@contextmanager
def lines_run_in(path: str) -> Iterator[list[int]]:
    """Count the lines executed in the file `path` while the block runs."""
    counted = [0]

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "line":
            counted[0] += 1
        return local

    def trace(frame, event, arg):  # type: ignore[no-untyped-def]
        return local if frame.f_code.co_filename == path else None

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield counted
    finally:
        sys.settrace(previous)


async def finished(app, pilot) -> list[str]:  # type: ignore[no-untyped-def]
    app.prompt_bar.input.value = "go"
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=30)
    app.timeline.focus()
    await pilot.pause()
    return [i for batch in app.timeline.batches() for i in batch]


async def test_up_and_down_walk_from_the_selected_card_not_over_every_call(
    make_test_app,
) -> None:
    app = make_test_app(long_session(), tools=[quick], allow=["quick"])
    async with app.run_test(size=(120, 40)) as pilot:
        order = await finished(app, pilot)
        assert len(order) == TURNS * CALLS
        middle = len(order) // 2
        app.select_call(order[middle])
        await pilot.pause()
        with lines_run_in(str(Path(workbench.widgets.timeline_input.__file__))) as counted:
            await pilot.press("down")
            await pilot.pause()
        assert app.timeline.selected_id == order[middle + 1]
        assert counted[0] < 60, f"{counted[0]} lines of key code for one step"
        app.select_call(order[(CALLS * 3) - 1])  # the last call of a reply: into the next
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        assert app.timeline.selected_id == order[CALLS * 3]
        await pilot.press("up", "up")
        await pilot.pause()
        assert app.timeline.selected_id == order[CALLS * 3 - 2]


async def test_up_and_down_stop_at_either_end_and_start_from_first_or_newest(
    make_test_app,
) -> None:
    app = make_test_app(long_session(), tools=[quick], allow=["quick"])
    async with app.run_test(size=(120, 40)) as pilot:
        order = await finished(app, pilot)
        timeline = app.timeline
        assert timeline._call_after(None, 1) == order[0]
        assert timeline._call_after(None, -1) == order[-1]
        assert timeline._call_after(order[0], -1) == order[0]
        assert timeline._call_after(order[-1], 1) == order[-1]
        assert [timeline._call_after(i, 1) for i in order[:-1]] == order[1:]
        assert [timeline._call_after(i, -1) for i in order[1:]] == order[:-1]


async def test_opening_one_reply_thinking_redraws_that_reply_only(
    make_test_app, monkeypatch
) -> None:
    looked_at: list[str] = []
    card_key = workbench.widgets.timeline.card_key

    def counting_card_key(record, *args):  # type: ignore[no-untyped-def]
        looked_at.append(record.id)
        return card_key(record, *args)

    monkeypatch.setattr(workbench.widgets.timeline, "card_key", counting_card_key)
    app = make_test_app(long_session(), tools=[quick], allow=["quick"])
    async with app.run_test(size=(120, 40)) as pilot:
        order = await finished(app, pilot)
        chosen = order[CALLS * 5]  # the first call of the sixth reply
        app.select_call(chosen)
        await pilot.pause()
        looked_at.clear()
        await pilot.press("T")
        await pilot.pause()
        lines = app.timeline.plain_lines()
        assert sum("▼ thinking" in line for line in lines) == 1
        assert sum("The user wants every file listed." in line for line in lines) == 1
        assert len(looked_at) <= 4 * CALLS, f"{len(looked_at)} cards looked at for one reply"
        assert set(looked_at) <= set(order[CALLS * 5 : CALLS * 6])
        await pilot.press("t")  # one is open: close them all
        await pilot.pause()
        assert not any("▼ thinking" in line for line in app.timeline.plain_lines())
        await pilot.press("t")  # none open: open them all
        await pilot.pause()
        assert sum("▼ thinking" in line for line in app.timeline.plain_lines()) == TURNS


async def test_a_refresh_looks_at_the_views_that_can_change_not_the_whole_timeline(
    make_test_app,
) -> None:
    app = make_test_app(long_session(), tools=[quick], allow=["quick"])
    async with app.run_test(size=(120, 40)) as pilot:
        await finished(app, pilot)
        timeline = app.timeline
        lines_before = timeline.plain_lines()
        with lines_run_in(str(Path(workbench.widgets.timeline.__file__))) as counted:
            timeline.sync(app.view_state, timeline._now)
        # the reply of the last turn (its cards looked at), not every one: walking all
        # 41 views ran about 650 lines
        assert counted[0] < 300, f"{counted[0]} lines of timeline code for one refresh"
        assert timeline.plain_lines() == lines_before
