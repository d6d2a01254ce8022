"""Hostile text never reaches the terminal raw: the live app and replay, frame by frame.

The scenario (`tests.support.hostile`) puts escapes (OSC 52 clipboard, OSC 2 title,
CSI, 8-bit C1), DEL, bidi controls and zero-width characters in the prompt, the
model id, thinking, text, tool names, call ids, arguments, file names, file
contents and command output; a session header's model id and provider carry them
too. Every screen update the apps make is scanned for any such raw character, and
the guard (`workbench.widgets.terminal_safety.TerminalGuard`) must never have had to act:
every path made its text literal itself, visibly.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.widgets import Checkbox, Static

from tests.support.hostile import (
    EVIL,
    OSC_52,
    FrameScanner,
    hostile_scenario,
    make_non_utf8_file,
)
from tests.support.notifications import notifications
from tests.widgets.helpers import scenario_of, wait_for
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.sanitize import UNSAFE, literal
from workbench.scratch import seed
from workbench.session_runs import ForkChoice, ForkRequest, fork_options
from workbench.sessions.history import first_prompt
from workbench.sessions.reader import read_session
from workbench.widgets.app import make_app
from workbench.widgets.permission_modal import PermissionModal
from workbench.widgets.replay_app import ForkedApp, ForkModal, ReplayApp
from workbench.widgets.terminal_safety import TerminalGuard

SIZE = (160, 48)
SHOWN_OSC_52 = "␛]52;c;cHduZWQ="
"""How the clipboard escape looks once literal."""


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> FrameScanner:
    return FrameScanner().install(monkeypatch)


def _runtime(workspace: Path, session: Path | None = None, **options: Any) -> Any:
    scenario = Scenario.model_validate(hostile_scenario())
    seed(workspace, scenario.workspace_files)
    make_non_utf8_file(workspace)
    return build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=workspace,
            pace=math.inf,
            tool_abort_grace=0.2,
            session=session,
            record=session is not None,
            **options,
        )
    )


def _assert_clean(frames: FrameScanner, app: Any) -> None:
    assert frames.frames > 0
    assert frames.raw == []  # nothing raw reached the terminal...
    assert app.terminal_guard.slipped == 0  # ...and not because the guard caught it


async def test_the_live_app_shows_hostile_text_literally(
    tmp_path: Path, frames: FrameScanner
) -> None:
    runtime = _runtime(tmp_path / "ws", tmp_path / "live.jsonl", approve="ask")
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        box = app.prompt_bar.input
        assert box.value == literal("please " + EVIL)  # what it shows is what it sends
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.pending_requests)  # run_command asks
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        for record in list(app.view_state.calls.values()):  # every call in the inspector
            app.select_call(record.id)
            await pilot.pause()
            result = app.inspector._anchors.get("Result", 0)  # below the stacked stages
            app.inspector.scroll_to(y=result, animate=False, immediate=True)
            await pilot.pause()
        app.select_call("id" + EVIL)
        await pilot.press("f9")  # a notification naming the selected (hostile) tool
        await wait_for(
            pilot,
            lambda: any(
                n.message.startswith("No breakpoint on tool␛]52") for n in notifications(app)
            ),
        )  # the hostile name is no pattern: said, no crash
        await pilot.press("f4")  # the network view: the request body as sent
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        _assert_clean(frames, app)
    assert frames.seen(SHOWN_OSC_52) and frames.seen("⟨U\\+202E⟩") and frames.seen("⟨U\\+200B⟩")
    assert frames.seen("⟨U\\+DCFF⟩")  # the non-UTF-8 file name, listed
    assert frames.seen("No breakpoint on")
    assert runtime.recorder.problems == []  # and the session holds every event


async def test_replay_and_a_fork_at_turn_0_show_hostile_text_literally(
    tmp_path: Path, frames: FrameScanner
) -> None:
    runtime = _runtime(tmp_path / "ws", tmp_path / "hostile.jsonl", approve="all")
    await runtime.agent.prompt(runtime.prompt)
    path = tmp_path / "hostile.jsonl"
    lines = path.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["model"]["provider"] = "provider" + EVIL  # a crafted header
    header["workspace"] = str(tmp_path / "ws") + EVIL
    lines[0] = json.dumps(header).encode()
    unrecordable = {"type": "unrecordable", "event_type": "kind" + EVIL, "error": EVIL}
    lines.insert(-2, json.dumps({"seq": 0, "ts": 0, "event": unrecordable}).encode())
    path.write_bytes(b"\n".join(lines))
    session = read_session(path)
    [warning] = session.warnings  # shown as a notification
    assert f"a kind{EVIL} event could not be recorded" in warning
    choice = ForkChoice("choice " + EVIL)
    app = ReplayApp(session, at=0, fork_choices=[choice])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.settled)
        for _ in range(40):
            await pilot.press("right")
        await wait_for(pilot, lambda: app.settled)
        await pilot.press("end")
        await wait_for(pilot, lambda: app.settled)
        await pilot.press("home")  # fork at turn 0: start again from the first prompt
        await wait_for(pilot, lambda: app.settled)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkModal))
        await pilot.press("enter")
        await pilot.pause()
        _assert_clean(frames, app)
    assert app.return_value == ForkRequest(0, choice)
    assert frames.seen("provider␛\\]52") and frames.seen("choice")

    options = fork_options(
        session,
        app.return_value,
        workspace=tmp_path / "ws",
        pace=0,
        session_path=tmp_path / "fork.jsonl",
    )
    prompt = first_prompt(session.events)
    assert OSC_52 in prompt  # the recorded prompt still holds the escape...
    forked = ForkedApp(build_runtime(options), options.fork, prefill=prompt)
    async with forked.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        assert forked.prompt_bar.input.value == literal(prompt)  # ...the box shows it literal
        _assert_clean(frames, forked)


async def test_always_allowing_a_pattern_that_holds_a_lone_surrogate_keeps_the_app_and_the_rules(
    make_test_app: Any, tmp_path: Path, frames: FrameScanner
) -> None:
    turns = [
        {"tool_calls": [{"name": "run_command", "raw": '{"command": "\\ud800"}'}]},
        {"text": "done"},
    ]
    app = make_test_app(scenario_of(turns, prompt="go"), approve="ask")
    rules = tmp_path / ".workbench" / "rules.toml"
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
        app.screen.query_one("#save", Checkbox).value = True
        await pilot.click("#pattern")  # always allow the suggested pattern, and save it
        await pilot.pause()
        error = app.screen.query_one("#perm-error", Static)
        assert "lone surrogate" in str(error.render()) and isinstance(app.screen, PermissionModal)
        assert not rules.exists()  # nothing half written
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        _assert_clean(frames, app)
    assert frames.seen("⟨U\\+D800⟩")


def test_the_guard_replaces_what_slips_through_and_keeps_the_width() -> None:
    guard = TerminalGuard()
    clean = [Segment("plain "), Segment("text", Style(bold=True))]
    assert guard.apply(clean, Color(0, 0, 0)) is clean
    dirty = [
        Segment("a\x1b]2;x\x07b\u202e", Style(bold=True)),
        Segment("link", Style(link="https://x/\x1b]52;c;eA==\x07")),
        Segment("\ud800", None),
    ]
    out = guard.apply(dirty, Color(0, 0, 0))
    assert [s.cell_length for s in out] == [s.cell_length for s in dirty]
    assert not any(UNSAFE.search(s.text) for s in out)
    assert out[0].text.startswith("a␛") and out[1].style is not None and not out[1].style.link
    assert guard.slipped == 3


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
async def test_a_recording_failure_is_a_notification_and_the_exit_code_is_3(
    make_test_app: Any,
) -> None:
    from workbench.cli.headless import recording_exit_code

    turns = [
        {"tool_calls": [{"name": "list_directory", "arguments": {"path": "."}}]},
        {"text": "done"},
    ]
    app = make_test_app(scenario_of(turns, prompt="go"), session=Path("/dev/full"))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        [note] = [n for n in notifications(app) if n.severity == "error"]
        assert note.message == (
            "Session recording to /dev/full stopped: OSError: No space left on device"
        )
        await pilot.pause()
    assert recording_exit_code(app.runtime, 0) == 3
