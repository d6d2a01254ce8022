"""Request bodies built from the previous request's are the bodies built from scratch."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.providers.test_openai_messages import READ, assistant, call, result
from workbench.agent import ImageContent, TextContent, ToolResultMessage, UserMessage
from workbench.agent.config import LlmContext
from workbench.agent.types import Message
from workbench.providers.openai_messages import build_request_body
from workbench.providers.request_bodies import RequestBodies
from workbench.providers.settings import OpenAISettings

SETTINGS = OpenAISettings(model="m")


def _message(kind: int, n: int) -> Message:
    """One of the shapes a transcript holds, repairs included (numbered ids, so
    results find, miss or repeat their calls)."""
    ids = [f"c{n}", f"c{n - 1}", f"c{n - 2}"]
    shapes: list[Message] = [
        UserMessage(content=f"go on {n}"),
        assistant(TextContent(text=f"text {n}"), call(ids[0])),
        assistant(call(ids[0]), call(f"d{n}"), stop="toolUse"),
        assistant(TextContent(text="cut"), call(ids[0]), stop="aborted"),
        assistant(stop="error"),
        assistant(TextContent(text=f"done {n}"), stop="stop"),
        result(ids[1]),
        result(ids[2], text="bad \udc80 bytes"),
        ToolResultMessage(
            tool_call_id=ids[1],
            tool_name="read_file",
            content=[TextContent(text="see"), ImageContent(data="AAAA", mime_type="image/png")],
        ),
        result("nobody"),
    ]
    return shapes[kind % len(shapes)]


def _body(messages: list[Message]) -> tuple[dict, list[str]]:
    return build_request_body("m", LlmContext("sys", list(messages), [READ]), SETTINGS)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "add", "add", "rewind", "replace"]), st.integers(0, 40)),
        min_size=1,
        max_size=40,
    )
)
def test_every_request_is_the_body_built_from_scratch(steps: list[tuple[str, int]]) -> None:
    bodies = RequestBodies()
    messages: list[Message] = []
    for n, (op, value) in enumerate(steps):
        if op == "add":
            messages.append(_message(value, n))
        elif op == "rewind":
            del messages[value % (len(messages) + 1) :]
        elif messages:
            messages[value % len(messages)] = _message(value, n)
        assert bodies.build("m", LlmContext("sys", list(messages), [READ]), SETTINGS) == _body(
            messages
        )


def test_a_growing_transcript_keeps_the_earlier_messages_objects() -> None:
    """The recorder finds the shared part of two requests by identity: what was sent
    before is the same objects, except the last turn's (converted once more, as its
    calls may still get results)."""
    bodies = RequestBodies()
    messages: list[Message] = [UserMessage(content="hi"), assistant(call("c1")), result("c1")]
    for n in range(2, 6):
        first, _ = bodies.build("m", LlmContext("", list(messages), [READ]), SETTINGS)
        messages += [assistant(TextContent(text="and"), call(f"c{n}")), result(f"c{n}")]
        second, _ = bodies.build("m", LlmContext("", list(messages), [READ]), SETTINGS)
        assert second == _body(messages)[0] | {"messages": second["messages"]}
        assert second["messages"] == _body(messages)[0]["messages"][1:]  # no system prompt
        shared = zip(first["messages"][:-2], second["messages"], strict=False)
        assert all(a is b for a, b in shared)
        assert first["messages"][-2:] == second["messages"][-4:-2]


def test_a_changed_setting_converts_again() -> None:
    bodies = RequestBodies()
    messages: list[Message] = [
        UserMessage(content="hi"),
        assistant(call("c1", raw="{broken")),
        result("c1"),
        UserMessage(content="again"),
    ]
    context = LlmContext("", messages, [READ])
    verbatim = OpenAISettings(model="m", malformed_arguments="verbatim")
    repaired, _ = bodies.build("m", context, SETTINGS)
    sent, _ = bodies.build("m", context, verbatim)
    assert repaired == build_request_body("m", context, SETTINGS)[0]
    assert sent == build_request_body("m", context, verbatim)[0]
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{broken"
