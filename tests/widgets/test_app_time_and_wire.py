"""Pilot tests of batch lanes, per-call cancel, the network view and the run summary."""

from __future__ import annotations

import anyio
from textual.widgets import OptionList, Static

from tests.support.chat_server import (
    ChatServer,
    finish,
    stream_reply,
    text_chunks,
    tool_call_chunks,
    usage_chunk,
)
from tests.widgets.helpers import blocking_tools, scenario_of, send, wait_for
from workbench.agent import AssistantMessage, ToolResultMessage
from workbench.providers.settings import OpenAISettings
from workbench.runtime import RunOptions, build_runtime
from workbench.view.summary import summarize
from workbench.widgets.app import make_app
from workbench.widgets.network_view import NetworkViewScreen
from workbench.widgets.permission_modal import PermissionModal
from workbench.widgets.screen_stats import ScreenStats


def lanes_text(app) -> str:  # type: ignore[no-untyped-def]
    """The inspector's lanes, without the section's title."""
    return app.inspector.section_text("Batch lanes").split("\n", 1)[1]


async def test_lanes_show_a_parallel_batch_with_a_slow_call_and_one_awaiting_approval(
    make_test_app, tmp_path
) -> None:
    release, tools = blocking_tools()
    turns = [
        {
            "tool_calls": [
                {"name": "slow", "arguments": {}},
                {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}},
                {"name": "fast", "arguments": {}},
            ]
        },
        {"text": "ok"},
    ]
    from workbench.tools import builtin_tools

    app = make_test_app(
        scenario_of(turns), tools=[*tools, *builtin_tools(tmp_path)], allow=["slow", "fast"]
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: isinstance(app.screen, PermissionModal))
        await anyio.sleep(0.05)
        app.screen.dismiss(None)  # look behind the dialog: the call waits for approval
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionModal))
        app.select_call("call_1_2")
        await pilot.pause()
        waiting = lanes_text(app)
        assert "write_file" in waiting and "▒" in waiting  # an approval phase is drawn
        assert "approval" in waiting.splitlines()[-1]
        app.runtime.gate.decide(
            app.view_state.pending_requests.copy().popitem()[0],
            __import__(
                "workbench.permissions", fromlist=["PermissionAnswer"]
            ).PermissionAnswer.allow_once(),
        )
        await wait_for(pilot, lambda: app.view_state.calls["call_1_3"].status == "done")
        app.select_call("call_1_1")
        await pilot.pause()
        running = lanes_text(app)
        assert app.view_state.calls["call_1_1"].status == "running"
        assert "█" in running.splitlines()[0]  # the slow call is executing
        release.set()
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
    records = [app.view_state.calls[i] for i in ("call_1_1", "call_1_2", "call_1_3")]
    executing = [dict(r.phases)["executing"] for r in records]
    assert max(executing) - min(executing) < 50  # parallel: they all started executing together
    assert "approval" in dict(records[1].phases)


async def test_lanes_of_a_sequential_batch_form_a_staircase(make_test_app) -> None:
    turns = [
        {
            "tool_calls": [
                {"name": "run_command", "arguments": {"command": "sleep 0.2"}},
                {"name": "run_command", "arguments": {"command": "sleep 0.2"}},
            ]
        },
        {"text": "ok"},
    ]
    app = make_test_app(scenario_of(turns), approve="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await send(pilot, app, lambda: app.view_state.run_state == "finished")
        app.select_call("call_1_2")
        await pilot.pause()
        lines = lanes_text(app).splitlines()
    first, second = (app.view_state.calls[i] for i in ("call_1_1", "call_1_2"))
    assert dict(second.phases)["executing"] >= first.ended_at  # one after the other
    lane1, lane2 = lines[0], lines[1]
    assert lane1.index("█") < lane2.index("█")  # the second lane's bar starts later


async def test_cancelling_one_call_leaves_the_rest_of_the_batch_and_the_turn(make_test_app) -> None:
    release, tools = blocking_tools()
    turns = [
        {"tool_calls": [{"name": "slow", "arguments": {}}, {"name": "fast", "arguments": {}}]},
        {"text": "next turn"},
    ]
    app = make_test_app(scenario_of(turns), tools=tools, allow=["slow", "fast"])
    async with app.run_test(size=(160, 48)) as pilot:
        await send(
            pilot,
            app,
            lambda: (
                app.view_state.calls.get("call_1_2") is not None
                and app.view_state.calls["call_1_2"].status == "done"
            ),
        )
        app.select_call("call_1_1")
        await pilot.press("f8")
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        assert app.view_state.calls["call_1_1"].status == "aborted"
        assert app.view_state.calls["call_1_2"].status == "done"
    results = {
        m.tool_call_id: m for m in app.agent.state.messages if isinstance(m, ToolResultMessage)
    }
    assert results["call_1_1"].is_error and "aborted" in results["call_1_1"].text.lower()
    assert not results["call_1_2"].is_error
    final = app.agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text == "next turn"
    # the model's next request carried both results, in order, the aborted one included
    kinds = [type(m).__name__ for m in app.agent.state.messages]
    assert kinds == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


async def test_network_view_shows_the_real_request_and_response(tmp_path) -> None:
    with ChatServer() as server:
        server.script(
            stream_reply(
                tool_call_chunks(0, "call_a", "list_directory", '{"path": "."}')
                + [finish("tool_calls"), usage_chunk(11, 7)]
            ),
            stream_reply(text_chunks("all done") + [finish(), usage_chunk(20, 3)]),
        )
        settings = OpenAISettings(
            base_url=server.url, model="test-model", max_retries=0, api_key="sk-secret-key"
        )
        runtime = build_runtime(
            RunOptions(
                workspace=tmp_path, provider_settings=settings, capture_chunks=True, record=False
            )
        )
        app = make_app(runtime, subtitle="test")
        async with app.run_test(size=(160, 48)) as pilot:
            app.prompt_bar.input.value = "list the files"
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.view_state.run_state == "finished")
            assert len(app.view_state.network) == 2
            await pilot.press("f4")
            await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
            detail = str(app.screen.query_one("#request-detail", Static).render())
            assert "status 200" in detail and '"model": "test-model"' in detail
            assert "list the files" in detail and "sk-secret-key" not in detail
            assert "time to first token" in detail and "tokens 11 in" in detail
            assert "raw stream:" in detail
            app.screen.query_one(OptionList).highlighted = 1
            await pilot.pause()
            second = str(app.screen.query_one("#request-detail", Static).render())
            assert '"role": "tool"' in second  # the tool result went back to the model
            app.screen.query_one("TabbedContent").active = "tab-summary"
            await pilot.pause()
            assert app.screen.query_one("#summary", Static).display
            summary = summarize(app.view_state)
            assert [t for t, _ in summary.turns] == [1, 2]
            assert (summary.total.input_tokens, summary.total.output_tokens) == (31, 10)
            assert summary.total.calls == 1 and summary.total.model_ms > 0
            await runtime.agent.wait_for_idle()
        assert server.bodies[0]["model"] == "test-model"


async def test_the_state_the_app_reads_always_has_every_event_folded_in(make_test_app) -> None:
    """Events wait in a short queue for the fold; reading `view_state` folds what waits,
    so an action never acts on a state behind the bus."""
    from workbench.agent.events import AgentStartEvent, TurnStartEvent
    from workbench.workspace_scan import CheckpointCaps

    stats = ScreenStats()
    # no checkpoints: their listener awaits a scan at agent_start, which lets a refresh in
    app = make_test_app(approve="all", stats=stats, checkpoints=CheckpointCaps(enabled=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = app.view_state.event_count
        for _ in range(3):  # straight onto the bus, with no chance for a refresh between
            await app.agent.publish(TurnStartEvent())
        await app.agent.publish(AgentStartEvent())
        assert stats.synced == before  # the screen has not caught up yet...
        state = app.view_state  # ...but the state has every event
        assert state.event_count == before + 4
        assert state.turn == 3 and state.run_state == "streaming" and state.runs == 1
        await wait_for(pilot, lambda: stats.synced == before + 4)
        assert "turn 3" in str(app.screen.query_one("#status").render())
