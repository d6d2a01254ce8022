"""Responses: items the upstream runs itself (a web search) are shown and passed as they
are; functions inside a `namespace` tool are declared and judged like any other; a
request that continues by `previous_response_id` stays in its conversation, and its
calls' results and denials reach the right places."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tests.proxy.helpers import AGENT_KEY, running_proxy, session_of
from tests.support.chat_server import Reply, stream_reply
from tests.support.upstreams.responses import (
    ResponsesServer,
    function_call,
    message,
    response_events,
    responses_stream,
    responses_whole,
)

SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "weather in Paris"},
}
DENIAL = "Permission denied by rule read_file (--deny)"


def reply(output: list[Any], streamed: bool, response_id: str) -> Reply:
    if streamed:
        return responses_stream(output, response_id=response_id)
    return responses_whole(output, response_id=response_id)


async def ask(client: openai.AsyncOpenAI, streamed: bool, **request: Any) -> Any:
    if streamed:
        async with client.responses.stream(model="m", **request) as stream:
            return await stream.get_final_response()
    return await client.responses.create(model="m", **request)


def search_events(streamed: bool) -> Reply:
    """A reply with a web search the upstream ran, then text (the search's own events
    are only `output_item.added` and `.done`, as in the API)."""
    output = [SEARCH, message("Sunny.", "msg_s")]
    if not streamed:
        return responses_whole(output, response_id="resp_s")
    events = response_events([message("Sunny.", "msg_s")], response_id="resp_s")
    for event in events:
        if "output_index" in event:
            event["output_index"] += 1
    events[-1]["response"]["output"] = output
    events[1:1] = [
        {"type": "response.output_item.added", "output_index": 0, "item": SEARCH},
        {"type": "response.output_item.done", "output_index": 0, "item": SEARCH},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    raw = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    return stream_reply(raw, done=False)


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_web_search_the_upstream_ran_is_shown_and_passed_as_it_is(tmp_path, streamed):
    with ResponsesServer() as server:
        server.script(search_events(streamed))
        async with running_proxy(server, tmp_path) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            tools: Any = [{"type": "web_search"}]
            done = await ask(client, streamed, input="weather?", tools=tools)
            await client.close()
    assert server.requests[0].json["tools"] == [{"type": "web_search"}]
    assert done.output[0].model_dump(exclude_none=True) == SEARCH
    assert done.output_text == "Sunny."
    _, state = session_of(proxy)
    notices = [i.text for i in state.items if i.kind == "notice"]
    assert notices == [
        "upstream ran web_search_call (completed): query 'weather in Paris' "
        "(passed to the agent as it is)"
    ]


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_function_in_a_namespace_is_declared_and_judged(tmp_path, streamed):
    namespaced = {**function_call("call_n1", "read_file", '{"path": "x"}'), "namespace": "files"}
    with ResponsesServer() as server:
        server.script(
            reply([namespaced], streamed, "resp_1"),
            reply([message("Not allowed.", "msg_2")], streamed, "resp_2"),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            tools: Any = [
                {
                    "type": "namespace",
                    "name": "files",
                    "description": "Files",
                    "tools": [{"type": "function", "name": "read_file", "description": "Read"}],
                }
            ]
            done = await ask(client, streamed, input="read x", tools=tools)
            await client.close()
        tool = proxy.conversations[0].tools["read_file"]
    assert tool.description == "(in namespace files) Read"
    assert done.output_text == "Not allowed."
    follow_up = server.requests[1].json
    assert follow_up["tools"] == tools  # forwarded as the agent declared them
    assert follow_up["input"][-2]["namespace"] == "files"  # the call as the model wrote it
    assert follow_up["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_n1",
        "output": DENIAL,
    }


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_request_that_continues_by_id_stays_in_its_conversation(tmp_path, streamed):
    with ResponsesServer() as server:
        server.script(
            reply([function_call("call_a", "read_file", '{"path": "a"}')], streamed, "resp_1"),
            reply([message("It says A.", "msg_2")], streamed, "resp_2"),
        )
        async with running_proxy(server, tmp_path) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            first = await ask(client, streamed, input="read a")
            output = [{"type": "function_call_output", "call_id": "call_a", "output": "A"}]
            done = await ask(client, streamed, input=output, previous_response_id=first.id)
            await client.close()
    assert done.output_text == "It says A."
    assert len(proxy.conversations) == 1
    assert server.requests[1].json["previous_response_id"] == "resp_1"
    _, state = session_of(proxy)
    call = state.calls["call_a"]
    assert call.status == "done" and call.result_text == "A"


@pytest.mark.parametrize("streamed", [True, False])
async def test_by_id_after_denials_the_upstream_gets_its_own_id_and_every_answer(
    tmp_path, streamed
):
    two_calls = [
        function_call("call_a", "get_time", "{}"),
        function_call("call_b", "read_file", '{"path": "b"}'),
    ]
    with ResponsesServer() as server:
        server.script(
            # all denied: the reply goes on upstream, as resp_2
            reply([function_call("call_d", "read_file", '{"path": "d"}')], streamed, "resp_1"),
            reply([message("I may not.", "msg_2")], streamed, "resp_2"),
            # one allowed, one denied: the denied one is answered with the next request
            reply(two_calls, streamed, "resp_3"),
            reply([message("Done.", "msg_4")], streamed, "resp_4"),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            first = await ask(client, streamed, input="read d")
            assert first.id == "resp_1" and first.output_text == "I may not."
            second = await ask(client, streamed, input="what time?", previous_response_id=first.id)
            assert [c.call_id for c in second.output if c.type == "function_call"] == ["call_a"]
            output = [{"type": "function_call_output", "call_id": "call_a", "output": "noon"}]
            done = await ask(client, streamed, input=output, previous_response_id=second.id)
            await client.close()
    assert done.output_text == "Done."
    assert len(proxy.conversations) == 1
    by_id = server.requests[2].json
    assert by_id["previous_response_id"] == "resp_2"  # the upstream's, where the reply went on
    last = server.requests[3].json
    assert last["previous_response_id"] == "resp_3"
    assert last["input"] == [
        {"type": "function_call_output", "call_id": "call_b", "output": DENIAL},
        {"type": "function_call_output", "call_id": "call_a", "output": "noon"},
    ]
    _, state = session_of(proxy)
    assert state.calls["call_a"].status == "done" and state.calls["call_a"].result_text == "noon"
