"""A reply whose calls are all denied goes on in the same turn, in every format: the proxy
answers the calls upstream with the denial, the agent gets the model's answer as the
rest of the reply it was waiting for, and its next request is forwarded with the hidden
exchange put back, so the upstream sees exactly the messages it saw before."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pydantic
import pytest

from tests.proxy.helpers import AGENT_KEY, READ_FILE, running_proxy, session_of
from tests.support.chat_server import (
    ChatServer,
    Reply,
    completion,
    finish,
    role_chunk,
    stream_reply,
    text_chunks,
    tool_call_chunks,
)
from tests.support.upstreams import anthropic as anthropic_up
from tests.support.upstreams import gemini as gemini_up
from tests.support.upstreams import responses as responses_up
from workbench.proxy.continuation import MAX_HIDDEN

DENIAL = "Permission denied by rule read_file (--deny)"
ARGS = {"path": "b.txt"}


def chat_reply(streamed: bool, text: str, call: str | None = None) -> Reply:
    arguments = json.dumps(ARGS)
    if not streamed:
        calls = (
            [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": arguments},
                }
            ]
            if call
            else None
        )
        return Reply.json(
            completion(
                text or None, tool_calls=calls, finish_reason="tool_calls" if call else "stop"
            )
        )
    chunks = [role_chunk(), *(text_chunks(text, 2) if text else [])]
    if call:
        chunks += tool_call_chunks(0, call, "read_file", arguments)
    return stream_reply([*chunks, finish("tool_calls" if call else "stop")])


async def chat_ask(client: openai.AsyncOpenAI, messages: list[Any], streamed: bool) -> str:
    if streamed:
        async with client.chat.completions.stream(
            model="m", messages=messages, tools=[READ_FILE]
        ) as stream:
            done = await stream.get_final_completion()
    else:
        done = await client.chat.completions.create(model="m", messages=messages, tools=[READ_FILE])
    message = done.choices[0].message
    assert not message.tool_calls
    return message.content or ""


@pytest.mark.parametrize("streamed", [True, False])
async def test_chat(tmp_path, streamed):
    with ChatServer() as server:
        server.script(
            chat_reply(streamed, "Let me look.", "call_1"),
            chat_reply(streamed, "I may not."),
            chat_reply(streamed, "Fine."),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            messages: list[Any] = [{"role": "user", "content": "go"}]
            text = await chat_ask(client, messages, streamed)
            assert text == "Let me look.\n\nI may not."
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "ok"}]
            assert await chat_ask(client, messages, streamed) == "Fine."
            await client.close()
        assert len(proxy.conversations) == 1  # the next request joined it
    follow_up, after = server.requests[1].json["messages"], server.requests[2].json["messages"]
    assert follow_up[-1] == {"role": "tool", "tool_call_id": "call_1", "content": DENIAL}
    assert after == [
        *follow_up,
        {"role": "assistant", "content": "I may not."},
        {"role": "user", "content": "ok"},
    ]
    _, state = session_of(proxy)
    assert state.calls["call_1"].status == "denied"
    assert len(state.network) == 3
    assert [i.text for i in state.items if i.kind == "notice"] == [
        "read_file (call_1): denied, and answered upstream by the proxy with the denial; "
        "the model's answer goes to the agent as the rest of this reply"
    ]


class City(pydantic.BaseModel):
    city: str
    allowed: bool


@pytest.mark.parametrize("streamed", [True, False])
async def test_chat_structured_output_is_parsed_after_a_denial(tmp_path, streamed):
    answer = json.dumps({"city": "Paris", "allowed": False})
    with ChatServer() as server:
        server.script(chat_reply(streamed, "", "call_1"), chat_reply(streamed, answer))
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            messages: Any = [{"role": "user", "content": "where?"}]
            tools: Any = [openai.pydantic_function_tool(ReadFile)]
            if streamed:
                async with client.chat.completions.stream(
                    model="m", messages=messages, tools=tools, response_format=City
                ) as stream:
                    done = await stream.get_final_completion()
            else:
                done = await client.chat.completions.parse(
                    model="m", messages=messages, tools=tools, response_format=City
                )
            await client.close()
    assert done.choices[0].message.parsed == City(city="Paris", allowed=False)
    follow_up = server.requests[1].json
    assert follow_up["response_format"]["type"] == "json_schema"
    assert follow_up["messages"][-1]["content"] == "Permission denied by rule read_file (--deny)"


class ReadFile(pydantic.BaseModel):
    path: str


@pytest.mark.parametrize("streamed", [True, False])
async def test_responses(tmp_path, streamed):
    up = responses_up

    def reply(output: list[Any], response_id: str) -> Reply:
        if streamed:
            return up.responses_stream(output, response_id=response_id)
        return up.responses_whole(output, response_id=response_id)

    with up.ResponsesServer() as server:
        server.script(
            reply(
                [
                    up.message("Let me look.", "msg_1"),
                    up.function_call("call_1", "read_file", json.dumps(ARGS)),
                ],
                "resp_1",
            ),
            reply([up.message("I may not.", "msg_2")], "resp_2"),
            reply([up.message("Fine.", "msg_3")], "resp_3"),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            tools: Any = [{"type": "function", "name": "read_file", "parameters": {}}]
            items: list[Any] = [{"role": "user", "content": "go"}]

            async def ask() -> Any:
                if streamed:
                    async with client.responses.stream(model="m", input=items, tools=tools) as s:
                        return await s.get_final_response()
                return await client.responses.create(model="m", input=items, tools=tools)

            done = await ask()
            assert [i.type for i in done.output] == ["message", "message"]
            assert done.output_text == "Let me look.I may not."
            assert done.id == "resp_1"  # the id the agent's SDK began with
            items += [i.model_dump(exclude_none=True) for i in done.output]
            items.append({"role": "user", "content": "ok"})
            assert (await ask()).output_text == "Fine."
            await client.close()
        assert len(proxy.conversations) == 1  # the next request joined it
    follow_up, after = server.requests[1].json["input"], server.requests[2].json["input"]
    assert follow_up[-1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": DENIAL,
    }
    assert after[: len(follow_up)] == follow_up
    assert [i.get("id") for i in after[len(follow_up) :]] == ["msg_2", None]


@pytest.mark.parametrize("streamed", [True, False])
async def test_anthropic(tmp_path, streamed):
    up = anthropic_up

    def reply(content: list[Any]) -> Reply:
        return up.anthropic_stream(content) if streamed else up.anthropic_whole(content)

    with up.AnthropicServer() as server:
        server.script(
            reply([up.text_block("Let me look."), up.tool_use("toolu_1", "read_file", ARGS)]),
            reply([up.text_block("I may not.")]),
            reply([up.text_block("Fine.")]),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = anthropic.AsyncAnthropic(
                base_url=proxy.url.removesuffix("/v1"), api_key=AGENT_KEY, max_retries=0
            )
            tools: Any = [{"name": "read_file", "input_schema": {"type": "object"}}]
            messages: list[Any] = [{"role": "user", "content": "go"}]

            async def ask() -> Any:
                if streamed:
                    async with client.messages.stream(
                        model="m", max_tokens=99, messages=messages, tools=tools
                    ) as s:
                        return await s.get_final_message()
                return await client.messages.create(
                    model="m", max_tokens=99, messages=messages, tools=tools
                )

            done = await ask()
            assert [b.text for b in done.content] == ["Let me look.", "I may not."]
            assert done.stop_reason == "end_turn"
            content = [b.model_dump(exclude_none=True) for b in done.content]
            messages += [{"role": "assistant", "content": content}]
            messages.append({"role": "user", "content": "ok"})
            assert (await ask()).content[0].text == "Fine."
            await client.close()
        assert len(proxy.conversations) == 1  # the next request joined it
    follow_up, after = server.requests[1].json["messages"], server.requests[2].json["messages"]
    assert follow_up[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": DENIAL, "is_error": True}
    ]
    assert after[: len(follow_up)] == follow_up
    assert after[len(follow_up) :] == [
        {"role": "assistant", "content": [{"type": "text", "text": "I may not."}]},
        {"role": "user", "content": "ok"},
    ]


@pytest.mark.parametrize("streamed", [True, False])
async def test_gemini(tmp_path, streamed):
    up = gemini_up

    def reply(parts: list[Any]) -> Reply:
        return up.gemini_stream(parts) if streamed else up.gemini_whole(parts)

    with up.GeminiServer() as server:
        server.script(
            reply([{"text": "Let me look."}, up.function_call("read_file", ARGS)]),
            reply([{"text": "I may not."}]),
            reply([{"text": "Fine."}]),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            contents: list[Any] = [{"role": "user", "parts": [{"text": "go"}]}]

            async def ask() -> list[Any]:
                verb = "streamGenerateContent?alt=sse" if streamed else "generateContent"
                body = {
                    "contents": contents,
                    "tools": [{"functionDeclarations": [{"name": "read_file"}]}],
                }
                async with httpx2.AsyncClient(timeout=20) as http:
                    response = await http.post(
                        f"{proxy.url.removesuffix('/v1')}/v1beta/models/g:{verb}",
                        json=body,
                        headers={"x-goog-api-key": "agent"},
                    )
                assert response.status_code == 200, response.text
                text = response.text
                chunks = (
                    [
                        json.loads(line[6:])
                        for line in text.splitlines()
                        if line.startswith("data: ")
                    ]
                    if streamed
                    else [response.json()]
                )
                return [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]

            parts = await ask()
            assert "".join(p["text"] for p in parts) == "Let me look.\n\nI may not."
            contents += [{"role": "model", "parts": parts}]
            contents.append({"role": "user", "parts": [{"text": "ok"}]})
            assert "".join(p["text"] for p in await ask()) == "Fine."
        assert len(proxy.conversations) == 1  # the next request joined it
    follow_up, after = server.requests[1].json["contents"], server.requests[2].json["contents"]
    assert follow_up[-1] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read_file", "response": {"error": DENIAL}}}],
    }
    assert after[: len(follow_up)] == follow_up
    reply, user = after[len(follow_up) :]  # the agent's copy, without the hidden turn's text
    assert reply["role"] == "model" and "".join(p["text"] for p in reply["parts"]) == "I may not."
    assert user == {"role": "user", "parts": [{"text": "ok"}]}


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_model_that_asks_again_is_answered_again_then_told_in_the_reply(tmp_path, streamed):
    with ChatServer() as server:
        server.script(
            *(chat_reply(streamed, "", f"call_{n}") for n in range(MAX_HIDDEN)),
            chat_reply(streamed, "Understood."),
        )
        async with running_proxy(server, tmp_path, deny=["read_file"]) as proxy:
            client = openai.AsyncOpenAI(base_url=proxy.url, api_key=AGENT_KEY, max_retries=0)
            text = await chat_ask(client, [{"role": "user", "content": "go"}], streamed)
            await client.close()
    assert text == "Understood."
    last = server.requests[-1].json["messages"]
    assert [m["tool_call_id"] for m in last if m["role"] == "tool"] == [
        f"call_{n}" for n in range(MAX_HIDDEN)
    ]
