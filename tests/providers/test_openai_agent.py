"""The provider under the real Agent loop: tool round trips, aborts and continuations.

The server checks what the SDK really sent; the bus shows what the app would see.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio

from tests.support.chat_server import (
    ChatServer,
    Pause,
    ReceivedRequest,
    Reply,
    finish,
    role_chunk,
    stream_reply,
    text_chunks,
    tool_call_chunks,
    usage_chunk,
)
from workbench.agent import Agent, AssistantMessage, ToolResultMessage, tool
from workbench.providers.openai import OpenAIProvider

MakeProvider = Callable[..., OpenAIProvider]

pytest_plugins = ["tests.support.fixtures"]


@tool
async def read_file(path: str) -> str:
    """Read a text file.

    Args:
        path: the file's path
    """
    return f"contents of {path}"


def make_agent(provider: OpenAIProvider) -> tuple[Agent, list[Any]]:
    agent = Agent(
        stream_fn=provider, model=provider.model, system_prompt="You are terse.", tools=[read_file]
    )
    provider.publish = agent.publish
    seen: list[Any] = []
    agent.subscribe(lambda event, _signal: seen.append(event))
    return agent, seen


def types(events: list[Any], *wanted: str) -> list[str]:
    return [e.type for e in events if e.type in wanted]


async def test_full_tool_round_trip(chat_server: ChatServer, openai_provider: MakeProvider) -> None:
    raw = '{ "path" : "notes/ü.txt" }'  # odd spacing must survive byte for byte
    chat_server.script(
        stream_reply(
            [
                role_chunk(),
                *text_chunks("Reading it.", 2),
                *tool_call_chunks(0, "call_abc", "read_file", raw, [1, 9, 17]),
                finish("tool_calls"),
                usage_chunk(50, 20),
            ],
            cuts=11,
        ),
        stream_reply([*text_chunks("It says hi.", 3), finish("stop"), usage_chunk(80, 5)]),
    )
    agent, seen = make_agent(openai_provider())
    new = await agent.prompt("What is in notes/ü.txt?")

    assert [m.role for m in new] == ["user", "assistant", "toolResult", "assistant"]
    first, result, last = new[1], new[2], new[3]
    assert isinstance(first, AssistantMessage) and isinstance(result, ToolResultMessage)
    assert isinstance(last, AssistantMessage)
    assert first.stop_reason == "toolUse" and first.tool_calls[0].raw_arguments == raw
    assert (result.tool_call_id, result.text, result.is_error) == (
        "call_abc",
        "contents of notes/ü.txt",
        False,
    )
    assert (last.text, last.stop_reason, last.usage.input) == ("It says hi.", "stop", 80)

    second = chat_server.requests[1].json
    assert second["messages"][1:] == [
        {"role": "user", "content": "What is in notes/ü.txt?"},
        {
            "role": "assistant",
            "content": "Reading it.",
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": raw},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "contents of notes/ü.txt"},
    ]
    assert second["tools"][0]["function"]["name"] == "read_file"

    # the bus: each model call is bracketed by its wire events, in order
    wire = types(
        seen,
        "provider_request",
        "provider_response",
        "message_start",
        "message_end",
        "tool_execution_end",
    )
    assert wire == [
        "message_start",
        "message_end",  # the prompt
        "provider_request",
        "message_start",
        "provider_response",
        "message_end",
        "tool_execution_end",
        "message_start",
        "message_end",  # the tool result
        "provider_request",
        "message_start",
        "provider_response",
        "message_end",
    ]
    arguments = [e for e in seen if e.type == "tool_arguments"][0]
    assert arguments.raw == raw and arguments.validated == {"path": "notes/ü.txt"}
    requests = [e for e in seen if e.type == "provider_request"]
    assert [r.body for r in requests] == [r.json for r in chat_server.requests]


async def test_continue_after_aborting_a_text_reply(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(text_chunks("The answer is", 3), done=False, then=[Pause(5.0)]),
        stream_reply([*text_chunks(" 42.", 1), finish()]),
    )
    agent, seen = make_agent(openai_provider())

    def abort_on_third_delta(event: Any, _signal: Any) -> None:
        deltas = [
            e
            for e in seen
            if e.type == "message_update" and e.assistant_message_event.type == "text_delta"
        ]
        if len(deltas) == 3:
            agent.abort()

    unsubscribe = agent.subscribe(abort_on_third_delta)
    with anyio.fail_after(2):
        await agent.prompt("What is the answer?")
    unsubscribe()
    aborted = agent.state.messages[-1]
    assert isinstance(aborted, AssistantMessage)
    assert (aborted.stop_reason, aborted.text) == ("aborted", "The answer is")
    assert chat_server.requests[0].wait_disconnected(2.0)

    await agent.prompt("Go on.")
    body = chat_server.requests[1].json
    assert body["messages"][1:] == [
        {"role": "user", "content": "What is the answer?"},
        {"role": "assistant", "content": "The answer is"},
        {"role": "user", "content": "Go on."},
    ]
    assert agent.state.messages[-1].text == " 42."  # type: ignore[union-attr]


async def test_continue_after_aborting_mid_tool_call(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(
            tool_call_chunks(0, "call_cut", "read_file", '{"path": "a', 2),
            done=False,
            then=[Pause(5.0)],
        ),
        stream_reply([*text_chunks("Okay.", 1), finish()]),
    )
    agent, seen = make_agent(openai_provider())

    def abort_on_arguments(event: Any, _signal: Any) -> None:
        if (
            event.type == "message_update"
            and event.assistant_message_event.type == "toolcall_delta"
        ):
            agent.abort()

    unsubscribe = agent.subscribe(abort_on_arguments)
    with anyio.fail_after(2):
        await agent.prompt("Read a.")
    unsubscribe()
    cut, unrun = agent.state.messages[-2], agent.state.messages[-1]
    assert isinstance(cut, AssistantMessage) and cut.stop_reason == "aborted"
    assert (
        isinstance(unrun, ToolResultMessage) and unrun.is_error and unrun.tool_call_id == "call_cut"
    )

    await agent.continue_()  # the transcript ends with a tool result: continue is allowed
    messages = chat_server.requests[1].json["messages"]
    assert messages[1:] == [
        {"role": "user", "content": "Read a."}
    ]  # the cut call and its result: gone
    request = [e for e in seen if e.type == "provider_request"][1]
    assert any("call_cut" in note and "aborted" in note for note in request.repairs)
    assert agent.state.messages[-1].text == "Okay."  # type: ignore[union-attr]


async def test_error_then_prompt_again(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        Reply.error(500, {"error": {"message": "model is loading"}}),
        stream_reply([*text_chunks("Ready now.", 1), finish()]),
    )
    agent, _ = make_agent(openai_provider())
    await agent.prompt("hello")
    assert agent.state.error_message is not None
    assert (
        "HTTP 500" in agent.state.error_message and "model is loading" in agent.state.error_message
    )
    await agent.prompt("hello again")
    roles = [(m["role"], m.get("content")) for m in chat_server.requests[1].json["messages"]]
    assert roles == [("system", "You are terse."), ("user", "hello"), ("user", "hello again")]
    assert agent.state.messages[-1].text == "Ready now."  # type: ignore[union-attr]


async def test_malformed_arguments_round_trip(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    def second_turn(request: ReceivedRequest) -> Reply:
        return stream_reply([*text_chunks("Let me fix that.", 1), finish()])

    chat_server.script(
        stream_reply(
            [
                *tool_call_chunks(0, "call_bad", "read_file", '{"path": "x.txt",}', 3),
                finish("tool_calls"),
            ]
        ),
        second_turn,
    )
    agent, _ = make_agent(openai_provider())
    await agent.prompt("read x")
    result = agent.state.messages[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "Invalid JSON" in result.text and '{"path": "x.txt",}' in result.text
    call, tool_message = chat_server.requests[1].json["messages"][2:4]
    # repaired for servers that parse arguments; the error result quotes the raw string
    assert call["tool_calls"][0]["function"]["arguments"] == "{}"
    assert tool_message["role"] == "tool" and '{"path": "x.txt",}' in tool_message["content"]


async def test_malformed_arguments_verbatim_policy(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(
            [*tool_call_chunks(0, "call_bad", "read_file", '{"path": ', 1), finish("tool_calls")]
        ),
        stream_reply([*text_chunks("ok", 1), finish()]),
    )
    agent, _ = make_agent(openai_provider(malformed_arguments="verbatim"))
    await agent.prompt("read")
    sent = chat_server.requests[1].json["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"path": '


async def test_length_cut_tool_call_is_not_run_and_the_next_request_is_valid(
    chat_server: ChatServer, openai_provider: MakeProvider
) -> None:
    chat_server.script(
        stream_reply(
            [*tool_call_chunks(0, "call_long", "read_file", '{"path": "ab', 2), finish("length")]
        ),
        stream_reply([*text_chunks("Shorter now.", 1), finish()]),
    )
    agent, seen = make_agent(openai_provider())
    await agent.prompt("read")
    assert types(seen, "tool_execution_start") == ["tool_execution_start"]
    result = agent.state.messages[2]
    assert isinstance(result, ToolResultMessage) and "output token limit" in result.text
    # the loop asks again at once; that request must be valid for any server
    messages = chat_server.requests[1].json["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {}
    assert messages[3]["tool_call_id"] == "call_long"
    assert agent.state.messages[-1].text == "Shorter now."  # type: ignore[union-attr]
