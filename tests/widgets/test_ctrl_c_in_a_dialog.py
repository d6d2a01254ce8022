"""ctrl+c in the permission dialog ends the run as aborted: no further model request."""

from __future__ import annotations

from tests.widgets.helpers import scenario_of, send, wait_for
from workbench.widgets.permission_modal import PermissionModal


async def test_ctrl_c_in_the_dialog_aborts_without_another_model_request(make_test_app) -> None:
    turns = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1"}}]},
        {"text": "done anyway"},
    ]
    app = make_test_app(scenario_of(turns))
    requests: list[int] = []
    stream_fn = app.agent.stream_fn

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        requests.append(1)
        return stream_fn(*args, **kwargs)

    app.agent.stream_fn = counted
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.agent.state.is_streaming)
        await wait_for(pilot, lambda: app.view_state.run_state == "aborted")
        await wait_for(pilot, lambda: "aborted" in str(app.main.status.render()))
        status = str(app.main.status.render())
    assert len(requests) == 1
    assert not (app.runtime.workspace / "a.txt").exists()
    assert "done anyway" not in str(app.agent.state.messages)
    assert "aborted" in status and "finished" not in status
