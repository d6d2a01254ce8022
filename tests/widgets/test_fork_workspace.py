"""A fork's screen says which workspace it runs in and what it kept from its parent."""

from __future__ import annotations

from pathlib import Path

from tests.sessions.helpers import EDIT_THEN_WRITE as FOUR
from tests.sessions.helpers import record_run
from tests.support.notifications import notifications
from tests.widgets.helpers import wait_for
from workbench.runtime import build_runtime
from workbench.session_runs import ForkChoice, ForkRequest, fork_options
from workbench.sessions import read_session
from workbench.widgets.replay_app import ForkedApp


async def test_the_forked_app_says_where_it_runs(tmp_path: Path) -> None:
    runtime, _ = await record_run(tmp_path / "ws", FOUR, approve="all")
    runtime.recorder.close()
    (tmp_path / "ws" / "a.txt").write_text("changed since\n")
    session = read_session(runtime.session_path)
    options = fork_options(
        session,
        ForkRequest(1, ForkChoice("scripted")),
        pace=0,
        session_path=tmp_path / "fork.jsonl",
    )
    options.approve = "all"
    app = ForkedApp(build_runtime(options), options.fork, prefill="")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        expected = (
            f"workspace: {options.workspace}: a scratch copy of the files at the end of turn 1"
        )

        def shown() -> list[str]:
            return [str(n.message) for n in notifications(app)]

        await wait_for(pilot, lambda: any(expected in text for text in shown()))
        assert str(options.workspace) in app.sub_title
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    assert (options.workspace / "a.txt").read_text() == "beta\n"  # as at the fork point
    assert (options.workspace / "b.txt").read_text() == "b"  # the fork's turn 2 ran there
    assert (tmp_path / "ws" / "a.txt").read_text() == "changed since\n"
