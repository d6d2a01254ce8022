"""Rewind in the live app (ctrl+z): the files put back as they were at the end of a turn,
the screen and the transcript cut there, and the run going on in a fork of the session."""

from __future__ import annotations

from pathlib import Path

from tests.support.notifications import notifications
from tests.widgets.helpers import send, wait_for
from workbench.providers.scripted import Scenario
from workbench.sessions.library import Library
from workbench.sessions.reader import read_session
from workbench.widgets.rewind import RewindModal

TWO_RUNS = Scenario.model_validate(
    {
        "name": "two-runs",
        "prompt": "read a.txt",
        "workspace_files": {"a.txt": "alpha\n"},
        "turns": [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
            {"text": "It says alpha."},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "b.txt", "content": "zeta"}},
                    {
                        "name": "edit_file",
                        "arguments": {"path": "a.txt", "old_text": "alpha", "new_text": "beta"},
                    },
                ]
            },
            {"text": "Wrote b.txt and changed a.txt."},
        ],
    }
)


def files_in(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".workbench" not in p.parts
    }


def turns_of(app) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for e in read_session(app.runtime.session_path).events if e.type == "turn_end")


async def test_ctrl_z_rewinds_files_and_timeline_and_goes_on_in_a_fork(
    make_test_app, tmp_path: Path
) -> None:
    app = make_test_app(TWO_RUNS, approve="all")
    workspace = app.runtime.workspace
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text="read a.txt")
        await send(
            pilot,
            app,
            lambda: app.view_state.run_state == "finished" and turns_of(app) == 4,
            text="now change things",
        )
        assert files_in(workspace) == {"a.txt": "beta\n", "b.txt": "zeta"}
        parent = app.runtime.session_path
        users = [i for i in app.view_state.items if i.kind == "user"]
        assert len(users) == 2
        assert "now change things" in "\n".join(app.timeline.plain_lines())

        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindModal))
        modal = app.screen
        assert [turn for turn, _ in modal.turns] == [0, 1, 2, 3, 4]
        assert "called write_file, edit_file" in modal.turns[3][1]
        await pilot.press("up", "up")  # from the latest (turn 4) to turn 2: run 1's end
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.session_path != parent)

        # the files as they were at the end of turn 2; b.txt, made since, is gone
        assert files_in(workspace) == {"a.txt": "alpha\n"}
        said = "\n".join(str(n.message) for n in notifications(app))
        assert "Rewound to the end of turn 2: restored 1 file(s), deleted 1 made since" in said
        assert f"a fork of {parent.name}" in said
        # the screen and the transcript stop at that turn
        assert [i.kind for i in app.view_state.items if i.kind == "user"] == ["user"]
        await pilot.pause()
        shown = "\n".join(app.timeline.plain_lines())
        assert "It says alpha." in shown and "now change things" not in shown
        assert app.view_state.turn == 2
        assert [m.role for m in app.agent.state.messages] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]
        assert app.screen is app.main and app.view_state.run_state != "running"

        # going on: the scripted model plays its next turns in the fork
        await send(
            pilot,
            app,
            lambda: app.view_state.run_state == "finished" and turns_of(app) == 4,
            text="change them again",
        )
        assert files_in(workspace) == {"a.txt": "beta\n", "b.txt": "zeta"}
    forked = read_session(app.runtime.session_path)
    assert forked.header.parent is not None
    assert Path(forked.header.parent.path) == parent.resolve()
    assert forked.header.parent.turn == 2
    assert read_session(parent).events  # the session rewound is as it was
    assert sum(1 for e in read_session(parent).events if e.type == "turn_end") == 4
    with Library(parent.parent) as library:
        library.refresh()
        [entry] = [e for e in library.entries() if e.path == app.runtime.session_path]
        assert Path(entry["parent"]) == parent.resolve()
        assert parent.name in library.parents()


async def test_escape_keeps_going_as_it_is_and_a_running_run_is_not_rewound(
    make_test_app,
) -> None:
    app = make_test_app(TWO_RUNS, approve="all")
    workspace = app.runtime.workspace
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.press("ctrl+z")  # nothing has run: nothing to rewind
        await pilot.pause()
        assert app.screen is app.main
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text="read a.txt")
        session = app.runtime.session_path
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindModal))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main)
        assert app.runtime.session_path == session and files_in(workspace) == {"a.txt": "alpha\n"}
