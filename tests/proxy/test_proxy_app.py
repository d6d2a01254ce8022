"""The app in proxy mode: conversations listed, a permission dialog for a held call."""

from __future__ import annotations

import asyncio

import openai

from tests.proxy.helpers import AGENT_KEY, text_reply, tool_loop, tool_reply
from tests.support.notifications import notifications
from tests.widgets.helpers import wait_for
from workbench.proxy import Proxy, ProxyOptions
from workbench.widgets.permission_modal import PermissionModal
from workbench.widgets.proxy_app import ConversationList, ProxyApp


def make_app(chat_server, tmp_path, **options) -> ProxyApp:
    proxy = Proxy(
        ProxyOptions(
            upstream=chat_server.url,
            port=0,
            session_dir=tmp_path / "sessions",
            workspace=tmp_path,
            **options,
        )
    )
    return ProxyApp(proxy)


def listed(app: ProxyApp) -> list[str]:
    listing = app.query_one(ConversationList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def test_a_held_call_asks_in_a_dialog_and_runs_once_allowed(chat_server, tmp_path):
    chat_server.script(tool_reply("call_u1", "a.txt"), text_reply("alpha, then."))
    app = make_app(chat_server, tmp_path, ask=["read_file"])
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.proxy.client is not None)
        client = openai.AsyncOpenAI(base_url=app.proxy.url, api_key=AGENT_KEY, max_retries=0)
        ran: list[str] = []
        agent = asyncio.create_task(tool_loop(client, "read a.txt", stream=True, ran=ran))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
        assert (
            app.screen.record.name == "read_file" and app.screen.record.raw == '{"path": "a.txt"}'
        )
        assert ran == [] and not agent.done()  # the response waits for the answer
        (row,) = listed(app)
        assert "1 test-model" in row and "awaiting approval" in row
        await pilot.press("ctrl+y")  # allow once
        text, _ = await asyncio.wait_for(agent, 10)
        await client.close()
        await wait_for(pilot, lambda: app.view_state.run_state == "finished")
        assert ran == ["a.txt"] and text == "alpha, then."
        call = app.view_state.calls["call_u1"]
        assert call.status == "done" and call.decision.decided_by == "user"
        assert "idle\n  1 tool call" in listed(app)[0]


async def test_conversations_side_by_side_one_shown_at_a_time(chat_server, tmp_path):
    chat_server.script(
        tool_reply("call_v1", "a.txt"),
        text_reply("first done"),
        tool_reply("call_v2", "b.txt"),
        text_reply("second done"),
    )
    app = make_app(chat_server, tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.proxy.client is not None)
        client = openai.AsyncOpenAI(base_url=app.proxy.url, api_key=AGENT_KEY, max_retries=0)
        await tool_loop(client, "read a.txt", stream=True)
        await tool_loop(client, "read b.txt", stream=True)  # a fresh start: a second conversation
        await client.close()
        await wait_for(pilot, lambda: len(listed(app)) == 2)
        first, second = app.proxy.conversations
        assert app.current is first and set(app.view_state.calls) == {"call_v1"}
        await pilot.press("f3")
        assert app.current is second
        await wait_for(pilot, lambda: "call_v2" in app.view_state.calls)
        assert set(app.view_state.calls) == {"call_v2"}
        assert app.view_state.calls["call_v2"].result_text == "beta contents"
        assert listed(app)[1].startswith("▶ 2")
        await pilot.press("f3")  # back: the first conversation's view is as it was
        assert app.current is first and app.view_state.calls["call_v1"].status == "done"


async def test_the_network_view_shows_the_request_as_sent_and_as_forwarded(chat_server, tmp_path):
    from textual.widgets import Static

    from workbench.widgets.network_view import NetworkViewScreen

    chat_server.script(
        tool_reply("call_w1", "b.txt", text="Looking."),
        text_reply("I may not."),
        text_reply("understood"),
    )
    app = make_app(chat_server, tmp_path, deny=["read_file"])
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.proxy.client is not None)
        client = openai.AsyncOpenAI(base_url=app.proxy.url, api_key=AGENT_KEY, max_retries=0)
        _, messages = await tool_loop(client, "read b.txt", stream=True)
        await tool_loop(client, "fine", stream=True, messages=messages)
        await client.close()
        await wait_for(
            pilot,
            lambda: len(app.view_state.network) == 3 and app.view_state.run_state == "finished",
        )
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))

        def detail() -> str:
            return str(app.screen.query_one("#request-detail", Static).render())

        shown = detail()
        assert "held and rewritten, calls taken out: call_w1" in shown
        assert "the proxy answered those calls upstream itself" in shown
        await pilot.press("down")
        shown = detail()  # the proxy's own request: the denial, and the model's answer
        assert "sent by the proxy: the denied calls (call_w1)" in shown
        assert "Permission denied by rule read_file (--deny)" in shown
        assert "exactly as received" in shown  # chat: the model's answer joins as it is
        await pilot.press("down")
        shown = detail()
        assert "request body as the agent sent it" in shown and "request body as forwarded" in shown
        assert "Permission denied by rule read_file (--deny)" in shown
        assert "exactly as received" in shown
        assert AGENT_KEY not in shown


async def test_calling_a_tool_by_hand_is_refused_in_proxy_mode(chat_server, tmp_path):
    from workbench.widgets.hand_call import ToolPickerModal

    app = make_app(chat_server, tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.proxy.client is not None)
        app.action_call_by_hand()
        await pilot.pause()
        assert not isinstance(app.screen, ToolPickerModal)
        assert any("proxy mode" in str(n.message) for n in notifications(app))


async def test_ctrl_n_is_no_new_run_here_and_the_waiting_line_leads_with_the_url(
    chat_server, tmp_path
):
    app = make_app(chat_server, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_for(pilot, lambda: app.proxy.client is not None)
        await wait_for(pilot, lambda: app.timeline.empty_text.startswith(app.proxy.url))
        runtime = app.runtime
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.runtime is runtime and not notifications(app)  # no run, no error toast


def test_a_reply_streaming_to_the_agent_is_painted_as_a_burst(chat_server, tmp_path):
    """The agent waits on every chunk while the screen refreshes (one event loop): a reply
    streaming 2 ms a chunk is painted twice a second at most; a slow one as it comes."""
    pacer = make_app(chat_server, tmp_path).pacer
    pacer.arrived(0.0)
    pacer.refreshing(17, 1 / 30)  # 17 events in a frame: 500 a second
    assert pacer.burst and pacer.delay(1 / 30) >= 0.45
    pacer.arrived(1.0)
    pacer.refreshing(19, 1.0 + 1 / 30)  # 2 events in a frame: 60 a second
    assert not pacer.burst and pacer.delay(1.0 + 1 / 30) < 0.05
