"""Request building: transcript repair, wire conversion, tools and options (pure)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from workbench.agent import (
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from workbench.agent.config import LlmContext
from workbench.providers.openai_messages import (
    NO_RESULT_TEXT,
    build_request_body,
    convert_messages,
    repair_transcript,
    tool_choice_param,
    wire_arguments,
)
from workbench.providers.settings import OpenAISettings


class ReadParams(BaseModel):
    path: str = Field(description="File to read")


async def _noop(*_: object) -> AgentToolResult:
    return AgentToolResult.text("")


READ = AgentTool("read_file", "Read", "Read a file", ReadParams, _noop)


def call(id_: str, raw: str | None = '{"path": "a"}', name: str = "read_file") -> ToolCall:
    args = json.loads(raw) if raw and raw.startswith("{") and raw.endswith("}") else {}
    return ToolCall(id=id_, name=name, arguments=args, raw_arguments=raw)


def result(id_: str, text: str = "ok", name: str = "read_file", **kw: object) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=id_, tool_name=name, content=[TextContent(text=text)], **kw
    )


def assistant(*content: object, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(content=list(content), stop_reason=stop)  # type: ignore[arg-type]


def wire(messages: list[object], **kw: object) -> list[dict[str, object]]:
    repaired = repair_transcript(messages)  # type: ignore[arg-type]
    return convert_messages("", repaired.messages, **kw)  # type: ignore[arg-type]


# -- conversion ----------------------------------------------------------------------


def test_full_round_trip_conversion() -> None:
    messages = [
        UserMessage(content="read a"),
        assistant(ThinkingContent(thinking="hmm"), TextContent(text="Reading."), call("c1")),
        result("c1", "contents of a"),
    ]
    assert convert_messages("Be brief.", messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "read a"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "contents of a"},
    ]


def test_raw_arguments_are_sent_byte_for_byte() -> None:
    raw = '{ "path" :"ünï/😀.txt",\n  "extra": [1,2] }'
    message = assistant(call("c1", raw))
    out = wire([UserMessage(content="x"), message, result("c1")])
    assert out[1]["tool_calls"][0]["function"]["arguments"] == raw  # type: ignore[index]


def test_arguments_fall_back_to_json_dumps_without_raw() -> None:
    tc = ToolCall(id="c1", name="read_file", arguments={"path": "ü"}, raw_arguments=None)
    assert wire_arguments(tc) == '{"path": "ü"}'


@pytest.mark.parametrize("raw", ['{"path": "a"', "[1, 2]", "", "not json"])
def test_malformed_arguments_repaired_or_verbatim(raw: str) -> None:
    tc = ToolCall(id="c1", name="read_file", arguments={}, raw_arguments=raw)
    assert wire_arguments(tc, "repair") == "{}"
    assert wire_arguments(tc, "verbatim") == raw


def test_assistant_without_text_sends_empty_string_content() -> None:
    out = wire([UserMessage(content="x"), assistant(call("c1")), result("c1")])
    assert out[1]["content"] == ""


def test_user_images_become_data_url_parts() -> None:
    message = UserMessage(
        content=[
            TextContent(text="what is this?"),
            ImageContent(data="QUJD", mime_type="image/png"),
        ]
    )
    assert wire([message]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
            ],
        }
    ]


def test_single_text_block_becomes_a_string() -> None:
    assert wire([UserMessage(content=[TextContent(text="hi")])]) == [
        {"role": "user", "content": "hi"}
    ]


def test_tool_result_images_follow_all_tool_messages_as_one_user_message() -> None:
    image = ImageContent(data="SU1H", mime_type="image/jpeg")
    messages = [
        UserMessage(content="shoot"),
        assistant(call("c1"), call("c2")),
        ToolResultMessage(tool_call_id="c1", tool_name="read_file", content=[image]),
        result("c2", "text only"),
        UserMessage(content="next"),
    ]
    out = wire(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert out[2]["content"] == "(see attached image)"
    assert out[4]["content"] == [
        {"type": "text", "text": "Attached image(s) from tool result:"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,SU1H"}},
    ]
    assert out[5] == {"role": "user", "content": "next"}


# -- repair --------------------------------------------------------------------------


def test_aborted_reply_keeps_text_and_drops_calls_with_their_results() -> None:
    aborted = assistant(
        ThinkingContent(thinking="t"),
        TextContent(text="Let me lo"),
        call("c1", '{"pa'),
        stop="aborted",
    )
    messages = [
        UserMessage(content="go"),
        aborted,
        result("c1", "Tool call was not executed", is_error=True),
        UserMessage(content="continue"),
    ]
    repaired = repair_transcript(messages)
    out = convert_messages("", repaired.messages)
    assert out == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "Let me lo"},
        {"role": "user", "content": "continue"},
    ]
    assert len(repaired.notes) == 1 and "aborted" in repaired.notes[0] and "c1" in repaired.notes[0]
    assert messages[1].content[2].type == "toolCall"  # the transcript itself is untouched


def test_empty_errored_reply_is_dropped() -> None:
    messages = [UserMessage(content="go"), assistant(stop="error"), UserMessage(content="again")]
    repaired = repair_transcript(messages)
    assert [m.role for m in repaired.messages] == ["user", "user"]
    assert repaired.notes == ["dropped an assistant message that ended in error"]


def test_missing_results_are_synthesized_after_real_ones() -> None:
    messages = [
        UserMessage(content="go"),
        assistant(call("c1"), call("c2"), call("c3")),
        result("c2"),
        UserMessage(content="steer"),
    ]
    out = wire(messages)
    assert [(m["role"], m.get("tool_call_id")) for m in out] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c2"),
        ("tool", "c1"),
        ("tool", "c3"),
        ("user", None),
    ]
    assert out[3]["content"] == NO_RESULT_TEXT


def test_missing_results_at_the_end_of_the_transcript() -> None:
    out = wire([UserMessage(content="go"), assistant(call("c1"))])
    assert out[-1] == {"role": "tool", "tool_call_id": "c1", "content": NO_RESULT_TEXT}


def test_orphan_and_duplicate_results_are_dropped() -> None:
    messages = [
        UserMessage(content="go"),
        result("zz"),
        assistant(call("c1")),
        result("c1", "first"),
        result("c1", "second"),
        result("c9"),
    ]
    repaired = repair_transcript(messages)
    out = convert_messages("", repaired.messages)
    assert [(m["role"], m.get("content")) for m in out] == [
        ("user", "go"),
        ("assistant", ""),
        ("tool", "first"),
    ]
    assert len(repaired.notes) == 3


def test_repair_is_idempotent_and_valid_transcripts_are_untouched() -> None:
    messages = [
        UserMessage(content="go"),
        assistant(call("c1")),
        result("c1"),
        assistant(TextContent(text="done"), stop="stop"),
    ]
    repaired = repair_transcript(messages)
    assert repaired.notes == []
    assert repaired.messages == messages
    assert repair_transcript(repaired.messages).messages == repaired.messages


def test_length_reply_keeps_its_truncated_call_repaired() -> None:
    messages = [
        UserMessage(content="go"),
        assistant(call("c1", '{"path": "a'), stop="length"),
        result("c1", is_error=True),
    ]
    out = wire(messages)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == "{}"  # type: ignore[index]
    assert out[2]["role"] == "tool"


# -- tools and body ------------------------------------------------------------------


def context(*messages: object, tools: list[AgentTool] | None = None) -> LlmContext:
    return LlmContext("sys", list(messages) or [UserMessage(content="hi")], tools or [])  # type: ignore[arg-type]


def test_body_with_tools_and_options() -> None:
    settings = OpenAISettings(
        model="m",
        base_url="http://localhost:11434/v1",
        temperature=0.2,
        max_tokens=100,
        tool_choice="read_file",
        parallel_tool_calls=False,
        extra_body={"keep_alive": "5m", "temperature": 0.7},
    )
    body, notes = build_request_body("m2", context(tools=[READ]), settings)
    assert notes == []
    assert body["model"] == "m2"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 100
    assert body["temperature"] == 0.7  # extra_body wins, as in the SDK
    assert body["keep_alive"] == "5m"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
    assert body["parallel_tool_calls"] is False
    (tool,) = body["tools"]
    assert tool["function"]["name"] == "read_file"
    assert tool["function"]["parameters"]["properties"]["path"]["description"] == "File to read"
    assert tool["function"]["parameters"]["required"] == ["path"]


def test_openai_gets_max_completion_tokens() -> None:
    settings = OpenAISettings(model="m", max_tokens=5)
    body, _ = build_request_body("m", context(), settings)
    assert body["max_completion_tokens"] == 5 and "max_tokens" not in body


def test_no_tools_means_no_tool_fields() -> None:
    settings = OpenAISettings(
        model="m",
        base_url="http://x/v1",
        tool_choice="auto",
        parallel_tool_calls=True,
        include_usage=False,
    )
    body, _ = build_request_body("m", context(), settings)
    assert set(body) == {"model", "messages", "stream"}


def test_tool_choice_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="not one of the tools offered"):
        tool_choice_param("write_file", [READ])
    settings = OpenAISettings(model="m", tool_choice="required")
    with pytest.raises(ValueError, match="needs tools"):
        build_request_body("m", context(), settings)
