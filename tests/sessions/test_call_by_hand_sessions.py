"""A call by hand in a session: recorded, replayed, exported as the user's, skipped
(and said so) by rerun, and absent from the transcript a resume would rebuild."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sessions.helpers import READ_A, record_run
from workbench.session_runs import rerun
from workbench.sessions import read_session
from workbench.sessions.export import export
from workbench.sessions.history import messages_of
from workbench.view.fold import fold


async def test_a_call_by_hand_is_recorded_replayed_exported_and_not_rerun(tmp_path: Path) -> None:
    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    result = await runtime.agent.call_tool("read_file", {"path": "a.txt"})
    assert not result.is_error and result.tool_call_id == "hand_1"
    session = read_session(runtime.session_path)

    replayed = fold(session.events)
    record = replayed.calls["hand_1"]
    assert record.by_hand and record.status == "done" and "alpha" in record.result_text
    assert replayed.items[-1].by_hand and replayed.items[-1].tool_call_ids == ["hand_1"]

    ids = [getattr(m, "tool_call_id", None) for m in messages_of(session.events)]
    assert "hand_1" not in ids  # a resume or fork rebuilds the transcript without it

    markdown = export(session, "md")
    assert "**Called by you, by hand**" in markdown and "`hand_1`" in markdown
    data = json.loads(export(session, "json"))
    assert [c["called_by"] for c in data["calls_by_hand"]] == ["user"]
    assert data["calls_by_hand"][0]["result"]["tool_call_id"] == "hand_1"
    assert "hand_1" not in json.dumps(data["messages"])
    page = export(session, "html")
    assert 'id="call-hand_1"' in page and "by hand, by a person" in page
    assert "alpha" in page.split('id="call-hand_1"')[1]

    report = await rerun(session, workspace=tmp_path / "ws")
    assert [c.status for c in report.calls] == ["same", "same"]
    assert any("not re-run" in w and "hand_1" in w for w in report.warnings)


async def test_replay_shows_the_call_by_hand_as_yours(tmp_path: Path) -> None:
    import anyio

    from workbench.widgets.replay_app import ReplayApp

    runtime, _live = await record_run(tmp_path / "ws", READ_A)
    await runtime.agent.call_tool("read_file", {"path": "a.txt"})
    app = ReplayApp(read_session(runtime.session_path))
    async with app.run_test(size=(120, 40)) as pilot:
        with anyio.fail_after(15):
            while not app.settled:
                await pilot.pause(0.02)
        await pilot.pause()
        assert app.view_state.calls["hand_1"].by_hand
        assert "called by you" in "\n".join(app.timeline.plain_lines())
