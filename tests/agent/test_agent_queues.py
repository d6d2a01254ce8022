"""Agent queues: steer / follow_up, one-at-a-time vs all, and continue_
(ported from pi's agent.test.ts and agent-queue.test.ts)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tests.agent.helpers import MODEL, FakeStream, assistant, call, make_tool, text_of, user

from workbench.agent import Agent, AgentToolResult, ToolResultMessage, UserMessage


def make_agent(stream: Any = None, **kwargs: Any) -> Agent:
    return Agent(stream_fn=stream or FakeStream(), model=MODEL, **kwargs)


def user_texts(agent: Agent) -> list[str]:
    return [text_of(m) for m in agent.state.messages if m.role == "user"]


def test_queued_messages_are_not_in_the_transcript() -> None:
    agent = make_agent()
    steer = UserMessage(content="Steering message")
    agent.steer(steer)
    agent.follow_up("Follow-up message")
    assert agent.state.messages == []
    steering, follow_ups = agent.queued
    assert steering == [steer] and [text_of(m) for m in follow_ups] == ["Follow-up message"]


def test_clear_queues_removes_everything() -> None:
    agent = make_agent()
    agent.steer("a")
    agent.steer("b")
    agent.follow_up("c")
    agent.clear_queues()
    assert agent.queued == ([], [])


def test_queued_returns_copies() -> None:
    agent = make_agent()
    agent.steer("a")
    steering, _ = agent.queued
    steering.clear()
    assert len(agent.queued[0]) == 1


def steer_during_first_tool(agent: Agent, *texts: str) -> Any:
    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        if tool_call_id == "t1":
            for text in texts:
                agent.steer(text)
        return AgentToolResult.text("ok")

    return execute


@pytest.mark.parametrize(
    ("mode", "requests", "grouped"),
    [("one-at-a-time", 4, [["s1"], ["s2"], ["s3"]]), ("all", 2, [["s1", "s2", "s3"]])],
)
async def test_steering_modes(mode: str, requests: int, grouped: list[list[str]]) -> None:
    stream = FakeStream(assistant(call("t1", args={"value": "v"})))
    agent = make_agent(stream, steering_mode=mode)
    agent.state.tools = [make_tool(execute=steer_during_first_tool(agent, "s1", "s2", "s3"))]
    await agent.prompt("go")

    assert stream.count == requests
    # each request after the batch carries one more group of steering messages
    new_users = []
    for request in stream.requests[1:]:
        sent = [text_of(m) for m in request.context.messages if m.role == "user"]
        new_users.append(sent[len(sum(new_users, [])) + 1 :])
    assert new_users == grouped
    assert user_texts(agent) == ["go", "s1", "s2", "s3"]
    assert agent.queued == ([], [])


@pytest.mark.parametrize(("mode", "requests"), [("one-at-a-time", 4), ("all", 2)])
async def test_follow_up_modes(mode: str, requests: int) -> None:
    stream = FakeStream()
    agent = make_agent(stream, follow_up_mode=mode)
    for text in ("f1", "f2", "f3"):
        agent.follow_up(text)
    await agent.prompt("go")
    assert stream.count == requests
    assert user_texts(agent) == ["go", "f1", "f2", "f3"]
    roles = [m.role for m in agent.state.messages]
    if mode == "all":
        assert roles == ["user", "assistant", "user", "user", "user", "assistant"]
    else:
        assert roles == ["user", "assistant"] * 4


async def test_follow_ups_wait_until_the_agent_would_stop() -> None:
    stream = FakeStream(
        assistant(call("t1", args={"value": "v"})),
        assistant(call("t2", args={"value": "v"})),
        assistant("stop"),
    )
    agent = make_agent(stream)

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        if tool_call_id == "t1":
            agent.follow_up("later")
        return AgentToolResult.text("ok")

    agent.state.tools = [make_tool(execute=execute)]
    await agent.prompt("go")
    roles = [(m.role, text_of(m)) for m in agent.state.messages if m.role in ("user", "assistant")]
    # the follow-up arrives only after the tool turns finished with a text reply
    assert roles[-3:] == [("assistant", "stop"), ("user", "later"), ("assistant", "done")]


async def test_agent_hooks_add_to_the_queues() -> None:
    served = {"steer": False, "follow": False}

    def steering() -> list[Any]:
        if not served["steer"]:
            served["steer"] = True
            return [user("from the steering hook")]
        return []

    async def follow_ups() -> list[Any]:
        if not served["follow"]:
            served["follow"] = True
            return [user("from the follow-up hook")]
        return []

    agent = make_agent(get_steering_messages=steering, get_follow_up_messages=follow_ups)
    agent.steer("queued steer")
    await agent.prompt("go")
    assert user_texts(agent) == [
        "go",
        "queued steer",
        "from the steering hook",
        "from the follow-up hook",
    ]


async def test_should_stop_after_turn_leaves_queued_follow_ups_queued() -> None:
    stream = FakeStream(default=assistant(call("t", args={"value": "v"})))
    agent = make_agent(stream, tools=[make_tool()], should_stop_after_turn=lambda turn: True)
    agent.follow_up("queued follow-up")
    await agent.prompt("run tool")
    assert stream.count == 1
    assert [text_of(m) for m in agent.queued[1]] == ["queued follow-up"]
    assert agent.state.messages[-1].role == "toolResult"


# -- continue_ -----------------------------------------------------------------------


async def test_continue_refuses_an_empty_transcript() -> None:
    agent = make_agent()
    with pytest.raises(ValueError, match="no messages"):
        await agent.continue_()
    assert agent.state.is_streaming is False


async def test_continue_refuses_a_trailing_assistant_message_with_nothing_queued() -> None:
    stream = FakeStream()
    agent = make_agent(stream, messages=[user("Initial"), assistant("Initial response")])
    with pytest.raises(ValueError, match="assistant"):
        await agent.continue_()
    assert stream.count == 0 and agent.signal is None


async def test_continue_from_a_user_message_or_tool_result() -> None:
    stream = FakeStream(assistant("answer"), assistant("after tool"))
    agent = make_agent(stream, messages=[user("question")])
    added = await agent.continue_()
    assert [m.role for m in added] == ["assistant"]

    result = ToolResultMessage(tool_call_id="x", tool_name="echo", content=[])
    agent.state.messages = [user("q"), assistant(call("x", args={"value": "v"})), result]
    added = await agent.continue_()
    assert [text_of(m) for m in added] == ["after tool"]
    assert [m.role for m in stream.requests[1].context.messages] == [
        "user",
        "assistant",
        "toolResult",
    ]


async def test_continue_after_an_assistant_turn_delivers_a_queued_follow_up() -> None:
    stream = FakeStream(assistant("Processed"))
    agent = make_agent(stream, messages=[user("Initial"), assistant("Initial response")])
    agent.follow_up("Queued follow-up")
    await agent.continue_()
    assert "Queued follow-up" in user_texts(agent)
    assert agent.state.messages[-1].role == "assistant" and stream.count == 1


async def test_continue_after_an_assistant_turn_keeps_one_at_a_time_steering() -> None:
    stream = FakeStream(assistant("Processed 1"), assistant("Processed 2"))
    agent = make_agent(stream, messages=[user("Initial"), assistant("Initial response")])
    agent.steer("Steering 1")
    agent.steer("Steering 2")
    await agent.continue_()
    assert [m.role for m in agent.state.messages[-4:]] == ["user", "assistant", "user", "assistant"]
    assert [text_of(m) for m in agent.state.messages[-4:]] == [
        "Steering 1",
        "Processed 1",
        "Steering 2",
        "Processed 2",
    ]
    assert stream.count == 2


async def test_continue_prefers_steering_over_follow_ups() -> None:
    stream = FakeStream(assistant("a"), assistant("b"))
    agent = make_agent(stream, messages=[user("Initial"), assistant("Initial response")])
    agent.follow_up("follow")
    agent.steer("steer")
    await agent.continue_()
    assert user_texts(agent) == ["Initial", "steer", "follow"]


async def test_continue_while_running_is_refused() -> None:
    release = anyio.Event()

    async def slow(model: Any, context: Any, options: Any) -> Any:
        from workbench.agent import AssistantMessageEvent

        await release.wait()
        yield AssistantMessageEvent(type="done", message=assistant("done"))

    agent = make_agent(slow)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "first")
        await anyio.sleep(0.01)
        assert agent.state.is_streaming
        with pytest.raises(RuntimeError, match="already running"):
            await agent.continue_()
        release.set()
    assert [text_of(m) for m in agent.state.messages] == ["first", "done"]
