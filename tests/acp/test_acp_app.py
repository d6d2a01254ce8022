"""The app on an ACP agent: messages typed go as prompts, permission requests open our
dialog, ctrl+c cancels, F3 switches the agent's mode, breakpoints hold its calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.helpers import Fake, ask_call
from tests.widgets.helpers import send, wait_for
from workbench.widgets.acp_app import AcpApp
from workbench.widgets.permission_modal import PermissionModal

pytestmark = pytest.mark.timeout(90)


def outcomes(fake: Fake) -> list[dict[str, str]]:
    return [
        m["result"]["outcome"]
        for m in fake.answers()
        if isinstance(m.get("result"), dict) and "outcome" in m["result"]
    ]


async def test_the_dialog_answers_the_agents_request(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[{"say": "Listing."}, *ask_call(), {"say": "Done."}]])
    app = AcpApp(fake.run(approve="ask"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal), text="list")
        assert app.screen.record.name == "Bash"
        assert app.screen.record.raw == '{"command": "ls -la"}'
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        call = app.view_state.calls["c1"]
        assert call.status == "done" and call.decision.decided_by == "user"
        assert call.result_text == "a.txt"
        from workbench.widgets.network_view import NetworkViewScreen

        await pilot.press("f4")  # the network view: the prompt and how it ended
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
        from workbench.widgets.network_view import _status_label

        (prompt,) = app.view_state.network.values()
        assert _status_label(prompt.response) == ("end_turn", "green")
        await pilot.press("escape")
    assert outcomes(fake) == [{"outcome": "selected", "optionId": "allow-once"}]
    assert fake.sent("session/prompt")[0]["params"]["prompt"][0]["text"] == "list"


async def test_ctrl_c_cancels_a_pending_request_and_the_prompt(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[*ask_call()], [{"say": "still here"}]])
    app = AcpApp(fake.run(approve="ask"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.view_state.run_state == "aborted")
        assert app.view_state.calls["c1"].status in ("denied", "aborted")
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text="again")
        assert app.view_state.items[-1].text == "still here"
    assert outcomes(fake) == [{"outcome": "cancelled"}]
    assert len(fake.sent("session/cancel")) == 1


async def test_a_breakpoint_holds_the_call_until_continued(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [[*ask_call()]])
    app = AcpApp(fake.run(approve="ask", allow=["Bash"], breakpoints=["Bash"]))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: app.view_state.pause is not None)
        assert app.view_state.calls["c1"].status == "paused"
        assert outcomes(fake) == []  # the agent waits for its answer meanwhile
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    assert outcomes(fake) == [{"outcome": "selected", "optionId": "allow-once"}]


async def test_f3_switches_the_agents_mode(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [])
    app = AcpApp(fake.run())
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        assert app.acp.mode == "default"
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.acp.mode == "plan")
    assert fake.sent("session/set_mode")[0]["params"]["modeId"] == "plan"


async def test_an_agent_that_cannot_start_ends_the_app_with_2(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [])
    app = AcpApp(fake.run(command=["/nonexistent/agent"]))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.failure is not None)
    assert app.return_value == 2
    assert "cannot start /nonexistent/agent" in (app.failure or "")


async def test_edit_args_is_off_for_an_acp_call_and_says_why(tmp_path: Path) -> None:
    """ACP has no way to change a call's input: the dialog offers no edit (F2 does
    nothing, the button is disabled, why is shown), and an edit answered by
    other means is refused with the request still pending, so nothing edited is shown
    as having run."""
    from textual.widgets import Button, Static

    from workbench.permissions import AnswerError, PermissionAnswer
    from workbench.widgets.json_editor import JsonEditModal

    fake = Fake(tmp_path, [[*ask_call(), {"say": "Done."}]])
    app = AcpApp(fake.run(approve="ask"))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal), text="list")
        modal = app.screen
        assert isinstance(modal, PermissionModal)
        assert modal.query_one("#edit", Button).disabled
        note = str(modal.query_one("#perm-noedit", Static).render())
        assert "runs its own arguments" in note and "your next message" in note
        assert "cannot pass it on" in str(modal.reason.placeholder)
        await pilot.press("f2")
        await pilot.pause()
        assert not isinstance(app.screen, JsonEditModal) and app.screen is modal
        gate = app.acp.runtime.gate
        assert gate is not None
        with pytest.raises(AnswerError, match="runs its own arguments"):
            gate.decide(modal.request_id, PermissionAnswer.edit({"command": "ls"}))
        assert [r.request_id for r in gate.pending] == [modal.request_id]
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        call = app.view_state.calls["c1"]
        assert call.status == "done" and call.edited_args is None
        assert call.parsed == {"command": "ls -la"}
    assert outcomes(fake) == [{"outcome": "selected", "optionId": "allow-once"}]
