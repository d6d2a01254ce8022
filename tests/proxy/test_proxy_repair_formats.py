"""A denied call is put back for the model, with the denial as its answer, in the
Responses and Anthropic formats too: the client never had it, the upstream sees it."""

from __future__ import annotations

import json
from typing import Any

import openai

from tests.proxy.helpers import AGENT_KEY, running_proxy
from tests.support.upstreams.anthropic import (
    AnthropicServer,
    anthropic_stream,
    text_block,
    tool_use,
)
from tests.support.upstreams.responses import (
    ResponsesServer,
    function_call,
    message,
    responses_stream,
)

DENIAL = "Permission denied by rule write_file (--deny)"


async def test_anthropic_the_next_request_carries_the_denied_call_and_its_answer(tmp_path):
    import anthropic  # here, not at collection: seconds of import in each worker

    with AnthropicServer() as server:
        server.script(
            anthropic_stream(
                [
                    tool_use("toolu_a", "read_file", {"path": "a"}),
                    tool_use("toolu_w", "write_file", {"path": "w"}),
                ]
            ),
            anthropic_stream([text_block("done")]),
        )
        async with running_proxy(server, tmp_path, deny=["write_file"]) as proxy:
            client = anthropic.AsyncAnthropic(
                base_url=proxy.url.removesuffix("/v1"), api_key=AGENT_KEY, max_retries=0
            )
            messages: list[Any] = [{"role": "user", "content": "go"}]
            async with client.messages.stream(model="m", max_tokens=10, messages=messages) as s:
                reply = await s.get_final_message()
            assert [b.id for b in reply.content if b.type == "tool_use"] == ["toolu_a"]
            messages += [
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in reply.content],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"}],
                },
            ]
            async with client.messages.stream(model="m", max_tokens=10, messages=messages) as s:
                await s.get_final_message()
            await client.close()
    sent = server.requests[1].json["messages"]
    assert [b["id"] for b in sent[1]["content"] if b["type"] == "tool_use"] == [
        "toolu_a",
        "toolu_w",
    ]
    results = {
        b["tool_use_id"]: b["content"] for b in sent[2]["content"] if b["type"] == "tool_result"
    }
    assert results == {"toolu_w": DENIAL, "toolu_a": "A"}


async def test_responses_the_next_request_carries_the_denied_call_and_its_answer(tmp_path):
    with ResponsesServer() as server:
        server.script(
            responses_stream(
                [
                    function_call("call_a", "read_file", '{"path": "a"}'),
                    function_call("call_w", "write_file", '{"path": "w"}'),
                ]
            ),
            responses_stream([message("done")]),
        )
        async with running_proxy(server, tmp_path, deny=["write_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            async with client.responses.stream(model="m", input="go") as s:
                reply = await s.get_final_response()
            calls = [i for i in reply.output if i.type == "function_call"]
            assert [c.call_id for c in calls] == ["call_a"]
            items: list[Any] = [{"role": "user", "content": "go"}]
            items += [c.model_dump(exclude_none=True) for c in calls]
            items.append({"type": "function_call_output", "call_id": "call_a", "output": "A"})
            async with client.responses.stream(model="m", input=items) as s:
                await s.get_final_response()
            await client.close()
    sent = server.requests[1].json["input"]
    pairs = [(i.get("type"), i.get("call_id")) for i in sent]
    assert ("function_call", "call_w") in pairs and ("function_call_output", "call_w") in pairs
    output = next(
        i for i in sent if i.get("type") == "function_call_output" and i["call_id"] == "call_w"
    )
    assert output["output"] == DENIAL
    assert json.loads(next(i for i in sent if i.get("call_id") == "call_w")["arguments"]) == {
        "path": "w"
    }


async def test_gemini_the_next_request_carries_the_denied_call_and_its_answer(tmp_path):
    import httpx2

    from tests.support.upstreams.gemini import GeminiServer, gemini_stream
    from tests.support.upstreams.gemini import function_call as gemini_call

    with GeminiServer() as server:
        server.script(
            gemini_stream(
                [gemini_call("read_file", {"path": "a"}), gemini_call("write_file", {"path": "w"})]
            ),
            gemini_stream([{"text": "done"}]),
        )
        async with running_proxy(server, tmp_path, deny=["write_file"]) as proxy:
            url = proxy.url.removesuffix("/v1") + "/v1beta/models/g:streamGenerateContent?alt=sse"
            contents: list[Any] = [{"role": "user", "parts": [{"text": "go"}]}]
            async with httpx2.AsyncClient(timeout=20) as http:
                first = await http.post(url, json={"contents": contents})
                assert b"write_file" not in first.content.split(b"was not run")[0]
                contents += [
                    {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a"}}}],
                    },
                    {
                        "role": "user",
                        "parts": [
                            {"functionResponse": {"name": "read_file", "response": {"r": "A"}}}
                        ],
                    },
                ]
                await http.post(url, json={"contents": contents})
    sent = server.requests[1].json["contents"]
    assert [p["functionCall"]["name"] for p in sent[1]["parts"]] == ["read_file", "write_file"]
    answers = [p["functionResponse"] for p in sent[2]["parts"]]
    assert [a["name"] for a in answers] == ["read_file", "write_file"]
    assert answers[1]["response"] == {"error": DENIAL}
