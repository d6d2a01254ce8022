"""The replay screen: scrub keys, the live app's final state, and fork."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import anyio

from tests.sessions.helpers import READ_A, record_run, scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.scratch import seed
from workbench.session_runs import ForkChoice, ForkRequest, fork_options, rerun
from workbench.sessions import read_session
from workbench.sessions.scrub import ScrubFold
from workbench.view.fold import fold
from workbench.widgets.app import make_app
from workbench.widgets.replay_app import ForkedApp, ForkModal, ReplayApp

SIZE = (120, 40)


async def press(pilot: Any, *keys: str) -> None:
    """Press keys, then wait until the replay screen shows where they led."""
    await pilot.press(*keys)
    await wait_for(pilot, lambda: pilot.app.settled)


async def wait_for(pilot: Any, condition: Any, timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await pilot.pause(0.02)
    await pilot.pause()


async def test_scrub_keys_move_the_timeline_and_the_inspector(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    session = read_session(runtime.session_path)
    app = ReplayApp(session, at=0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.settled)
        assert app.position == 0 and app.inspector.record is None and app.scrubber.position == 0
        await press(pilot, "right_square_bracket")  # the first turn starts
        assert app.events[app.position - 1].type == "turn_start" and app.view_state.turn == 1
        await press(pilot, "full_stop")  # the first tool call's preflight
        assert app.selected_id == "call_1_1" and app.inspector.record.id == "call_1_1"
        assert app.inspector.record.status == "requested"
        at_start = app.position
        await press(pilot, "right", "right", "right")
        assert app.position == at_start + 3 and app.scrubber.position == app.position
        assert app.view_state == fold(session.events[: app.position])
        await press(pilot, "full_stop")
        assert app.inspector.record.id == "call_1_2"
        await press(pilot, "comma")  # back: refolded from the start, the same state as forward
        assert app.inspector.record.id == "call_1_1" and app.position == at_start
        assert app.view_state == fold(session.events[:at_start])
        await press(pilot, "d")
        assert app.events[app.position - 1].type == "permission_decision"
        assert app.inspector.record.decision is not None
        await press(pilot, "end")
        assert app.position == len(session.events) and app.view_state.run_state == "finished"
        assert app.inspector.record.result_text and app.timeline.batches()
        await press(pilot, "left")  # one event back: the timeline follows in place
        assert app.position == len(session.events) - 1
        assert app.view_state == fold(session.events[: app.position])
        shown = app.timeline.synced()
        assert [item for item, _ in shown] == app.view_state.items
        assert all(item is i for (item, _), i in zip(shown, app.view_state.items, strict=True))
        assert all(rev == item.rev for item, rev in shown)
        await press(pilot, "home")
        assert app.position == 0 and app.view_state.items == [] and not app.timeline.batches()


async def test_errors_jump_and_the_replayed_final_state_equals_the_live_app(tmp_path: Path) -> None:
    loaded = scenario("demo")
    seed(tmp_path / "ws", loaded.workspace_files)
    options = RunOptions(scenario=loaded, workspace=tmp_path / "ws", pace=math.inf, approve="all")
    live_app = make_app(build_runtime(options))
    async with live_app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: live_app.view_state.run_state == "finished", 30)
    session = read_session(live_app.runtime.session_path)
    app = ReplayApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.settled)
        assert app.position == len(session.events)
        assert app.view_state == live_app.view_state
        await press(pilot, "home", "e")
        first_error = app.events[app.position - 1]  # the search with malformed arguments
        assert first_error.type == "tool_arguments" and first_error.failed_stage == "parse"
        assert app.inspector.record.id == first_error.tool_call_id == "call_1_4"
        assert app.inspector.record.status == "invalid"
        await press(pilot, "e", "E")
        assert app.events[app.position - 1] is first_error


async def test_fork_continues_live_into_a_session_that_names_its_parent(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    parent = read_session(runtime.session_path)
    choice = ForkChoice("the recorded scenario")
    app = ReplayApp(parent, at=0, fork_choices=[choice])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("full_stop")  # in turn 1: fork after it
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkModal))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.return_value is not None)
    request = app.return_value
    assert request == ForkRequest(1, choice)
    options = fork_options(
        parent, request, workspace=tmp_path / "ws", pace=0, session_path=tmp_path / "fork.jsonl"
    )
    assert options.fork.parent.turn == 1 and options.fork.messages[-1].role == "toolResult"
    forked = ForkedApp(build_runtime(options), options.fork, prefill="")
    async with forked.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # the screen starts where the replay was, and the model's next turn runs at once
        await wait_for(pilot, lambda: forked.view_state.run_state == "finished")
        assert forked.timeline.batches()
    child = read_session(tmp_path / "fork.jsonl")
    assert child.header.parent is not None
    assert child.header.parent.path == str(runtime.session_path.resolve())
    copied = child.header.parent.events
    assert [e.type for e in child.events[:copied]] == [e.type for e in parent.events[:copied]]
    assert fold(child.events) == forked.view_state
    texts = [m.text for m in (e.message for e in child.events[copied:] if e.type == "message_end")]
    assert texts == ["It says alpha."]  # the scenario's next turn, not a replay of turn 1
    report = await rerun(child, workspace=tmp_path / "ws")  # a fork file re-runs whole
    assert [c.status for c in report.calls] == ["same", "same"] and report.warnings == []


async def test_going_back_shares_the_earlier_turns_objects_and_equals_a_fresh_fold(
    tmp_path: Path,
) -> None:
    runtime, _live = await record_run(tmp_path / "ws")
    events = read_session(runtime.session_path).events
    scrub = ScrubFold(events)
    state = scrub.goto(len(events))
    turn_starts = sum(1 for e in events if e.type == "turn_start")
    assert len(scrub.checkpoints) == 1 + turn_starts + 1  # the start, each turn, the end
    kept = 0
    for position in range(len(events) - 1, -1, -1):
        items, calls = list(state.items), dict(state.calls)
        state = scrub.goto(position)  # a new state object after a move back
        assert state is scrub.state
        assert state == fold(events[:position]), f"differs at {position}"
        turn = state.turn
        # the earlier turns' objects are the ones on screen already
        assert all(a is b for a, b in zip(state.items, items, strict=False) if a.turn < turn)
        assert all(state.calls[k] is calls[k] for k in state.calls if calls[k].turn < turn)
        kept += sum(1 for a, b in zip(state.items, items, strict=False) if a is b)
    assert kept > 0
    # and forward again, by turns and to the end, from anywhere
    for position in (3, len(events) // 2, len(events)):
        scrub.goto(0)
        assert scrub.goto(position) == fold(events[:position])


async def test_a_session_reaching_back_into_an_earlier_turn_scrubs_exactly(
    tmp_path: Path,
) -> None:
    """A model that reuses a call id changes an earlier turn's call: no checkpoint holds,
    and every move still gives the fresh fold."""
    turns = [
        {"tool_calls": [{"id": "same", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"tool_calls": [{"id": "same", "name": "read_file", "arguments": {"path": "b.txt"}}]},
        {"text": "done"},
    ]
    data = {
        "name": "reuse",
        "prompt": "go",
        "turns": turns,
        "workspace_files": {"a.txt": "a\n", "b.txt": "b\n"},
    }
    runtime, _live = await record_run(tmp_path / "ws", data)
    events = read_session(runtime.session_path).events
    scrub = ScrubFold(events)
    scrub.goto(len(events))
    assert not scrub.trusted and len(scrub.checkpoints) == 1
    for position in range(len(events), -1, -1):
        assert scrub.goto(position) == fold(events[:position])


async def test_a_session_read_after_the_first_frame_says_how_far_it_has_come(
    tmp_path: Path,
) -> None:
    """`workbench replay` draws a frame first and reads the file in a thread, counting
    the events read; the replay then opens at the end, folded as it was read."""
    from textual.widgets import Static

    from workbench.widgets.starting_screen import StartingScreen

    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    path = runtime.session_path
    halfway, go_on = threading.Event(), threading.Event()
    scrub = ScrubFold()
    choice = ForkChoice("the recorded model", None)

    def read(progress: Any) -> tuple[Any, list[ForkChoice]]:
        def feed(batch: list[Any]) -> None:
            scrub.feed(batch)
            progress(1234)
            halfway.set()
            go_on.wait(10)

        return read_session(path, feed), [choice]

    app = ReplayApp(read=read, scrub=scrub)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, halfway.is_set)

            def said() -> str:
                return str(app.screen.query_one("#starting", Static).render())

            await wait_for(pilot, lambda: said() == "Reading the session… 1,234 events")
            assert isinstance(app.screen, StartingScreen) and app.session is None
            go_on.set()
            await wait_for(pilot, lambda: app.session is not None and app.settled)
            session = read_session(path)
            assert app.position == len(session.events) and app.fork_choices == [choice]
            assert app.view_state == fold(session.events)
            await press(pilot, "home")
            assert app.position == 0
    finally:
        go_on.set()
    assert app.start_error is None


async def test_a_session_that_cannot_be_replayed_ends_the_app_with_2(tmp_path: Path) -> None:
    from workbench.sessions.reader import SessionError

    def unreadable(progress: Any) -> Any:
        raise SessionError("cannot read /nowhere.jsonl: No such file or directory")

    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    session = read_session(runtime.session_path)
    too_far = f"--at 1000000 is outside 0..{len(session.events)}"
    unread = "cannot read /nowhere.jsonl: No such file or directory"
    for app, why in [
        (ReplayApp(read=unreadable), unread),
        (ReplayApp(read=lambda progress: (session, []), at=10**6), too_far),
    ]:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda running=app: not running.is_running)
        assert app.return_code == 2 and app.start_error == why


async def wait_until(pilot: Any, condition: Any, timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await pilot.pause(0.02)
