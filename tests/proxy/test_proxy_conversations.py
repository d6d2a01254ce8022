"""Requests grouped into conversations: several agents at once, each its own session."""

from __future__ import annotations

import asyncio
import itertools
import json

import openai

from tests.proxy.helpers import AGENT_KEY, running_proxy, session_of, tool_loop
from tests.support.chat_server import (
    ReceivedRequest,
    Reply,
    finish,
    role_chunk,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from workbench.sessions.reader import read_session


def scripted_model():
    """Asks for a file (a fresh call id each time), then answers with what came back."""
    numbers = itertools.count(1)

    def reply(request: ReceivedRequest) -> Reply:
        last = request.json["messages"][-1]
        if last["role"] == "tool":
            return stream_reply([role_chunk(), *text_chunks(f"got {last['content']}"), finish()])
        n = next(numbers)
        path = "a.txt" if n % 2 else "b.txt"
        calls = tool_call_chunks(0, f"call_{n}", "read_file", json.dumps({"path": path}))
        return stream_reply([role_chunk(), *calls, finish("tool_calls")], gap=0.01)

    return reply


async def test_two_agents_at_once_are_two_conversations_and_two_sessions(chat_server, tmp_path):
    chat_server.default = scripted_model()
    async with running_proxy(chat_server, tmp_path) as proxy:
        clients = [
            openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            for _ in range(2)
        ]
        results = await asyncio.gather(*(tool_loop(c, "read a file", stream=True) for c in clients))
        for c in clients:
            await c.close()
    assert sorted(text for text, _ in results) == ["got alpha contents", "got beta contents"]
    assert len(proxy.conversations) == 2
    paths = {c.recorder.path for c in proxy.conversations}
    assert len(paths) == 2
    for number in (1, 2):
        session, state = session_of(proxy, number)
        (call,) = state.calls.values()
        assert call.status == "done"
        path = json.loads(call.raw)["path"]
        assert call.result_text == {"a.txt": "alpha contents", "b.txt": "beta contents"}[path]
        assert len(state.network) == 2 and state.run_state == "finished"
        assert read_session(session.path).header.model.provider == "proxy"


async def test_a_request_that_extends_a_conversation_joins_it(chat_server, tmp_path):
    chat_server.default = scripted_model()
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        _, messages = await tool_loop(client, "read a file", stream=True)
        await tool_loop(client, "and another", stream=True, messages=messages)
        await tool_loop(client, "read a file", stream=True)  # a fresh start: a new conversation
        await client.close()
    assert len(proxy.conversations) == 2
    _, first = session_of(proxy, 1)
    assert first.runs == 2 and len(first.calls) == 2 and len(first.network) == 4
    assert [i.blocks[0].text for i in first.items if i.kind == "user"] == [
        "read a file",
        "and another",
    ]


async def test_a_conversation_session_opens_in_replay(chat_server, tmp_path):
    from tests.proxy.helpers import text_reply, tool_reply
    from tests.widgets.helpers import wait_for
    from workbench.widgets.replay_app import ReplayApp

    chat_server.script(tool_reply("call_r1", "a.txt", text="Reading."), text_reply("alpha."))
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        await tool_loop(client, "read a.txt", stream=True)
        await client.close()
    session, live = session_of(proxy)
    app = ReplayApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.settled)
        assert app.position == len(session.events)
        call = app.view_state.calls["call_r1"]
        assert call.status == "done" and call.result_text == "alpha contents"
        assert app.view_state.run_state == live.run_state == "finished"


async def test_replay_of_a_conversation_has_its_network_view(chat_server, tmp_path):
    from textual.widgets import Static

    from tests.proxy.helpers import text_reply, tool_reply
    from tests.widgets.helpers import wait_for
    from workbench.widgets.network_view import NetworkViewScreen
    from workbench.widgets.replay_app import ReplayApp

    chat_server.script(tool_reply("call_r2", "b.txt", text="Reading."), text_reply("I may not."))
    async with running_proxy(chat_server, tmp_path, deny=["read_file"]) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        await tool_loop(client, "read b.txt", stream=True)
        await client.close()
    session, _live = session_of(proxy)
    app = ReplayApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.settled)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))

        def detail() -> str:
            return str(app.screen.query_one("#request-detail", Static).render())

        shown = detail()  # the agent's request, and its reply held: the call taken out
        assert "request body (exactly as sent; auth stripped)" in shown
        assert "calls taken out: call_r2" in shown
        await pilot.press("down")
        shown = detail()  # the proxy's own request, answering the call with the denial
        assert "sent by the proxy: the denied calls (call_r2)" in shown
        assert "Permission denied by rule read_file (--deny)" in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, NetworkViewScreen))
        await pilot.press("home")  # before the first request: nothing on the wire yet
        await wait_for(pilot, lambda: app.rendered_position == 0)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
        assert app.screen.state.network == {}


async def test_a_first_request_with_history_starts_after_it(chat_server, tmp_path):
    from tests.proxy.helpers import text_reply

    chat_server.script(text_reply("welcome back", streamed=False))
    history = [
        {"role": "system", "content": "You read files."},
        {"role": "user", "content": "read a.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_old",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"},
                },
                "not a call",
            ],
        },
        {"role": "tool", "tool_call_id": "call_old", "content": "alpha contents"},
        {"role": "user", "content": "thanks, and now?"},
    ]
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        reply = await client.chat.completions.create(model="test-model", messages=history)
        await client.close()
    assert reply.choices[0].message.content == "welcome back"
    conv = proxy.conversations[0]
    assert [m.role for m in conv.agent.state.messages] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]
    assert conv.agent.state.system_prompt == "You read files."
    _, state = session_of(proxy)
    assert [i.blocks[0].text for i in state.items if i.kind == "user"] == ["thanks, and now?"]
    assert state.calls == {}
    assert chat_server.requests[0].json["messages"] == history


async def test_a_proxy_session_exports_and_refuses_a_rerun(chat_server, tmp_path):
    from tests.proxy.helpers import text_reply, tool_reply
    from workbench.cli.commands import subcommand_main

    chat_server.script(tool_reply("call_x1", "a.txt"), text_reply("alpha."))
    async with running_proxy(chat_server, tmp_path) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
        await tool_loop(client, "read a.txt", stream=True)
        await client.close()
    session, _ = session_of(proxy)
    out = tmp_path / "run.md"
    assert subcommand_main("export", [str(session.path), "--format", "md", "-o", str(out)]) == 0
    assert "### Tool call `read_file` (`call_x1`)" in out.read_text()
    import anyio

    assert await anyio.to_thread.run_sync(subcommand_main, "rerun", [str(session.path)]) == 2
