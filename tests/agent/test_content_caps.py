"""Caps on what a tool or a model can make the workbench hold: images in results
(bytes, claimed pixels, all of a result's together) and each model reply's length.
Each cap gives an error naming it; the run goes on and the transcript stays valid."""

from __future__ import annotations

import base64
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.agent.helpers import assert_events_valid, assert_transcript_valid
from workbench.agent import Agent, AgentToolResult, tool
from workbench.agent.content_caps import DEFAULT_CAPS, ContentCaps, base64_size, claimed_pixels
from workbench.agent.types import ImageContent, ToolResultMessage
from workbench.config_file import config_caps
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.providers.stream_builder import StreamBuilder
from workbench.runtime import RunOptions, build_runtime

MIB = 1024 * 1024

pytest_plugins = ["tests.support.fixtures"]


def png(width: int, height: int, size: int = 0) -> str:
    """Base64 of a PNG header claiming `width` x `height`, padded to `size` bytes."""
    header = (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)
    )
    return base64.b64encode(header + b"\0" * max(0, size - len(header))).decode()


def gif(width: int, height: int) -> str:
    return base64.b64encode(b"GIF89a" + struct.pack("<HH", width, height) + b"\0" * 20).decode()


def scenario(tool_name: str) -> Scenario:
    turns = [{"tool_calls": [{"name": tool_name, "arguments": {}}]}, {"text": "done"}]
    return Scenario.model_validate({"name": "s", "turns": turns})


async def run_tool(execute: Any) -> tuple[Agent, list[Any]]:
    provider = ScriptedProvider(scenario(execute.name))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[execute])
    events: list[Any] = []
    agent.subscribe(lambda e, _s: events.append(e))
    await agent.prompt("go")
    return agent, events


def result_of(agent: Agent) -> ToolResultMessage:
    [message] = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    return message


def test_sizes_come_from_the_base64_length_and_the_header() -> None:
    for raw in (b"", b"a", b"ab", b"abc", b"abcd" * 1000):
        assert base64_size(base64.b64encode(raw).decode()) == len(raw)
    assert claimed_pixels(png(640, 480)) == 640 * 480
    assert claimed_pixels(gif(65535, 65535)) == 65535 * 65535
    assert claimed_pixels("not base64!") is None
    assert claimed_pixels(base64.b64encode(b"plain text").decode()) is None


async def test_a_40_mb_image_is_left_out_with_the_cap_named() -> None:
    data = png(100, 100, 40 * MIB)

    @tool
    async def snapshot() -> list[Any]:
        """Answers a huge image."""
        return [ImageContent(data=data, mime_type="image/png")]

    agent, events = await run_tool(snapshot)
    message = result_of(agent)
    [block] = message.content
    assert block.type == "text"
    assert block.text == (
        "[image image/png left out: 40.0 MB, over the cap of 5.0 MB per image (max_image_bytes)]"
    )
    end = next(e for e in events if e.type == "tool_execution_end")
    assert end.result.content == message.content  # what the views and the session get
    assert agent.state.messages[-1].text == "done"  # the run went on
    assert_transcript_valid(agent.state.messages)
    assert_events_valid(events)


@pytest.mark.parametrize(
    "blocks, cap_named",
    [
        ([("image/png", png(70_000, 70_000))], "max_image_pixels"),  # a tiny file, a huge claim
        ([("image/gif", gif(65535, 65535))], "max_image_pixels"),
        ([("image/png", png(10, 10, 6 * MIB))], "max_image_bytes"),
        ([("image/jpeg", png(10, 10, 6 * MIB))], "max_image_bytes"),  # whatever it claims to be
        ([("image/png", png(10, 10, 4 * MIB))] * 3, "max_result_image_bytes"),  # each fits
    ],
)
async def test_each_cap_names_itself(blocks: list[tuple[str, str]], cap_named: str) -> None:
    @tool
    async def pictures() -> list[Any]:
        """Answers images."""
        return [ImageContent(data=data, mime_type=mime) for mime, data in blocks]

    agent, _events = await run_tool(pictures)
    content = result_of(agent).content
    over = [b for b in content if b.type == "text"]
    assert over and all(f"({cap_named})]" in b.text for b in over)
    if cap_named == "max_result_image_bytes":
        assert [b.type for b in content] == ["image", "image", "text"]  # the first two fit


async def test_an_image_in_an_update_is_capped_too() -> None:
    big = png(10, 10, 8 * MIB)
    seen: list[Any] = []

    @tool
    async def progress(on_update: Any) -> str:
        """Sends a huge image as progress."""
        on_update(AgentToolResult(content=[ImageContent(data=big, mime_type="image/png")]))
        return "ok"

    provider = ScriptedProvider(scenario("progress"))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[progress])
    agent.subscribe(
        lambda e, _s: seen.append(e.partial_result) if e.type == "tool_execution_update" else None
    )
    await agent.prompt("go")
    [update] = seen
    assert "(max_image_bytes)" in update.content[0].text


async def test_an_image_under_the_caps_is_kept_as_it_is() -> None:
    small = png(64, 48, 2048)

    @tool
    async def thumb() -> list[Any]:
        """A small image."""
        return [ImageContent(data=small, mime_type="image/png")]

    agent, _events = await run_tool(thumb)
    assert result_of(agent).content == [ImageContent(data=small, mime_type="image/png")]


async def test_the_caps_are_the_runs_settings(tmp_path: Path) -> None:
    data = png(10, 10, 2 * MIB)

    @tool
    async def snap() -> list[Any]:
        """A 2 MB image."""
        return [ImageContent(data=data, mime_type="image/png")]

    provider = ScriptedProvider(scenario("snap"))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[snap])
    agent.caps = ContentCaps(max_image_bytes=MIB)
    await agent.prompt("go")
    assert "over the cap of 1.0 MB per image (max_image_bytes)" in result_of(agent).text


# -- model output ----------------------------------------------------------------------


def endless(kind: str, piece: str = "thinking hard… ") -> Any:
    """A provider that streams `kind` ("thinking", "text" or "arguments") without end,
    and a plain reply to the request after that one."""
    calls = {"n": 0}

    async def stream_fn(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
        calls["n"] += 1
        builder = StreamBuilder(model)
        for event in builder.start():
            yield event
        if calls["n"] > 1:
            for event in [*builder.text("fine"), *builder.done()]:
                yield event
            return
        if kind == "arguments":
            index, events = builder.begin_tool_call("call_1", "echo")
            for event in events:
                yield event
        while True:
            if kind == "thinking":
                events = builder.thinking(piece)
            elif kind == "text":
                events = builder.text(piece)
            else:
                events = builder.tool_call_delta(index, piece)
            for event in events:
                yield event

    return stream_fn


@pytest.mark.parametrize("kind", ["thinking", "text", "arguments"])
async def test_an_endless_reply_is_stopped_at_the_cap(kind: str) -> None:
    from workbench.agent.types import Model

    @tool
    async def echo(value: str = "") -> str:
        """Echoes."""
        return value

    agent = Agent(stream_fn=endless(kind), model=Model(id="m", provider="p"), tools=[echo])
    agent.caps = ContentCaps(max_turn_output_chars=100_000)
    events: list[Any] = []
    agent.subscribe(lambda e, _s: events.append(e))
    await agent.prompt("go")
    reply = agent.state.messages[1]
    assert reply.stop_reason == "error"
    assert "cap of 100,000 characters" in reply.error_message
    assert "(max_turn_output_chars)" in reply.error_message
    kept = reply.content[-1]
    field = {"thinking": "thinking", "text": "text", "arguments": "raw_arguments"}[kind]
    length = len(getattr(kept, field))
    assert 100_000 - len("thinking hard… ") < length <= 100_000  # what fits, before the cut
    shown = sum(
        len(e.assistant_message_event.delta or "")
        for e in events
        if e.type == "message_update" and e.assistant_message_event.delta
    )
    assert shown == length  # the views were sent exactly what is kept
    assert_transcript_valid(agent.state.messages)
    assert_events_valid(events)
    await agent.prompt("again")  # the transcript goes on
    assert agent.state.messages[-1].text == "fine"


def test_the_default_output_cap_is_above_any_model_limit() -> None:
    assert DEFAULT_CAPS.max_turn_output_chars >= 1_000_000
    assert DEFAULT_CAPS.max_image_bytes >= 5 * MIB


# -- settings ------------------------------------------------------------------------


def test_limits_come_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[limits]\nmax_image_bytes = 1024\nmax_turn_output_chars = 5000\n")
    caps = config_caps(path)
    assert caps == ContentCaps(max_image_bytes=1024, max_turn_output_chars=5000)
    with pytest.raises(ValueError, match="Config file not found"):
        config_caps(tmp_path / "missing.toml")  # --config names a file that must exist


@pytest.mark.parametrize(
    "table, error",
    [
        ("max_image_byte = 10", "unknown setting 'max_image_byte'"),
        ("max_image_bytes = 0", "max_image_bytes must be a positive integer (got 0)"),
        ("max_image_bytes = -5", "must be a positive integer"),
        ('max_image_bytes = "5MB"', "must be a positive integer (got '5MB')"),
        ("max_image_bytes = true", "must be a positive integer (got True)"),
        ("max_image_bytes = 1.5", "must be a positive integer"),
    ],
)
def test_a_bad_limit_is_an_error_at_load(tmp_path: Path, table: str, error: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[limits]\n{table}\n")
    with pytest.raises(ValueError, match="limits") as caught:
        config_caps(path)
    assert error in str(caught.value) and str(path) in str(caught.value)


async def test_the_runtime_applies_the_runs_caps(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    options = RunOptions(
        scenario="demo", workspace=workspace, record=False, caps=ContentCaps(max_image_bytes=7)
    )
    runtime = build_runtime(options)
    assert runtime.agent.caps.max_image_bytes == 7


# -- MCP: results, embedded blobs, sampling requests -----------------------------------


@pytest.mark.parametrize("embedded", [False, True])
async def test_an_mcp_image_is_capped_as_a_result(embedded: bool) -> None:
    import mcp_types

    from workbench.mcp.content import map_content

    data = png(10, 10, 6 * MIB)
    if embedded:
        item: Any = mcp_types.EmbeddedResource(
            type="resource",
            resource=mcp_types.BlobResourceContents(
                uri="file:///big.png", blob=data, mime_type="image/png"
            ),
        )
    else:
        item = mcp_types.ImageContent(type="image", data=data, mime_type="image/png")

    @tool
    async def server_tool() -> list[Any]:
        """What an MCP tool's answer becomes."""
        return map_content(item)

    agent, _events = await run_tool(server_tool)
    assert "(max_image_bytes)" in result_of(agent).text


def test_a_sampling_requests_image_over_the_cap_never_reaches_the_model() -> None:
    import mcp_types

    from workbench.mcp.requests import to_messages

    big = mcp_types.ImageContent(type="image", data=png(10, 10, 6 * MIB), mime_type="image/png")
    small = mcp_types.ImageContent(type="image", data=png(8, 8, 100), mime_type="image/png")
    [first, second] = to_messages(
        [
            mcp_types.SamplingMessage(role="user", content=big),
            mcp_types.SamplingMessage(role="user", content=small),
        ]
    )
    assert "(max_image_bytes)" in first.content[0].text
    assert second.content[0].type == "image"


# -- the real provider -------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])  # DeepSeek, Ollama
async def test_a_real_providers_reasoning_flood_is_stopped_at_the_cap(
    chat_server: Any, openai_provider: Any, field: str
) -> None:
    from tests.support.chat_server import finish, reasoning_chunks, stream_reply, text_chunks

    flood = "Let me reconsider. " * 2000  # 38,000 characters in 400 chunks
    chat_server.script(
        stream_reply([*reasoning_chunks(flood, 400, field_name=field), finish("stop")]),
        stream_reply([*text_chunks("fine", 1), finish("stop")]),
    )
    provider = openai_provider()
    agent = Agent(stream_fn=provider, model=provider.model)
    agent.caps = ContentCaps(max_turn_output_chars=10_000)
    await agent.prompt("think")
    reply = agent.state.messages[1]
    assert reply.stop_reason == "error" and "(max_turn_output_chars)" in reply.error_message
    assert 9_000 < len(reply.content[0].thinking) <= 10_000
    await agent.prompt("again")
    assert agent.state.messages[-1].text == "fine"


# -- re-runs -------------------------------------------------------------------------


PICTURE = {
    "name": "picture",
    "prompt": "show it",
    "turns": [
        {"tool_calls": [{"name": "picture", "arguments": {}}]},
        {"text": "Shown."},
    ],
}


@tool
async def picture() -> list[Any]:
    """Answers a 2 KiB image (under the default caps)."""
    return [ImageContent(data=png(10, 10, 2048), mime_type="image/png")]


async def test_a_rerun_applies_the_limits_of_the_users_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.sessions.helpers import record_run
    from workbench.session_runs import rerun
    from workbench.sessions import read_session

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "none.toml"))  # no file: defaults
    runtime, _ = await record_run(workspace, PICTURE, tools=[picture])
    session = read_session(runtime.session_path)
    same = await rerun(session, workspace=tmp_path / "same", tools=[picture])
    assert [c.status for c in same.calls] == ["same"]

    config = tmp_path / "config.toml"
    config.write_text("[limits]\nmax_image_bytes = 1024\n")
    monkeypatch.setenv("WORKBENCH_CONFIG", str(config))
    capped = await rerun(session, workspace=tmp_path / "capped", tools=[picture])
    [call] = capped.calls
    assert call.status == "differs" and call.now is not None
    assert "over the cap of 1.0 KB per image (max_image_bytes)" in call.now.text

    given = await rerun(
        session,
        workspace=tmp_path / "given",
        tools=[picture],
        caps=ContentCaps(max_image_bytes=4096),  # the caller's caps win over the file's
    )
    assert [c.status for c in given.calls] == ["same"]

    config.write_text("[limits]\nmax_image_bytes = 0\n")
    with pytest.raises(ValueError, match=r"max_image_bytes must be a positive integer"):
        await rerun(session, workspace=tmp_path / "bad", tools=[picture])


async def test_workbench_rerun_reads_the_limits_of_its_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.sessions.helpers import record_run
    from workbench.cli.rerun import rerun_main

    workspace = tmp_path / "ws"
    workspace.mkdir()
    runtime, _ = await record_run(workspace, "demo")
    config = tmp_path / "config.toml"
    config.write_text("[limits]\nmax_turn_output_chars = -1\n")
    code = await anyio.to_thread.run_sync(
        lambda: rerun_main([str(runtime.session_path), "--config", str(config)])
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"{config}: [limits]: max_turn_output_chars must be a positive integer" in err
