"""The tool author's API from pi-agent-core's newer releases: `is_error` without raising,
`output_schema` + `structured_content` (checked, kept in sessions), `duration_ms` on
`tool_execution_end`, and `Agent.reset()` refused during a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.agent.helpers import FakeStream, assistant, call, run_loop, text_of
from pydantic import BaseModel

from workbench.agent import Agent, AgentTool, AgentToolResult, tool
from workbench.agent.config import BeforeToolCallResult


class Weather(BaseModel):
    city: str
    celsius: float


@tool(output_schema=Weather)
async def weather(city: str) -> dict[str, Any]:
    """The weather."""
    return (
        {"city": city, "celsius": 21.5} if city != "Nowhere" else {"city": city, "celsius": "hot"}
    )


@tool
async def lookup(key: str) -> AgentToolResult:
    """Look a key up; a missing key is an error result, not an exception."""
    return AgentToolResult(
        content=[{"type": "text", "text": f"no such key: {key}"}],  # type: ignore[list-item]
        details={"tried": [key]},
        is_error=True,
    )


def json_schema_tool(value: Any) -> AgentTool:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult(content=[], structured_content=value)

    schema = {
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {"type": "integer"}}},
        "required": ["rows"],
    }
    return AgentTool("rows", "Rows", "Rows.", {"type": "object"}, execute, output_schema=schema)


async def test_is_error_without_raising_keeps_details() -> None:
    run = await run_loop(
        FakeStream(assistant(call("c", "lookup", {"key": "k"})), assistant("ok")), [lookup]
    )
    result = run.messages[2]
    assert result.is_error and text_of(result) == "no such key: k"
    assert result.details == {"tried": ["k"]}
    [end] = run.rec.of("tool_execution_end")
    assert end.is_error


async def test_structured_content_is_checked_against_the_output_schema() -> None:
    stream = FakeStream(
        assistant(
            call("a", "weather", {"city": "Oslo"}), call("b", "weather", {"city": "Nowhere"})
        ),
        assistant("ok"),
    )
    run = await run_loop(stream, [weather])
    good, bad = run.messages[2], run.messages[3]
    assert not good.is_error and good.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert bad.is_error
    assert text_of(bad).startswith(
        'Structured content of tool "weather" does not match its output schema:'
    )
    assert "  - celsius: Input should be a valid number" in text_of(bad)
    assert bad.structured_content == {"city": "Nowhere", "celsius": "hot"}  # shown as it came


async def test_json_schema_output_and_a_missing_value() -> None:
    stream = FakeStream(assistant(call("a", "rows", {})), assistant("ok"))
    run = await run_loop(stream, [json_schema_tool({"rows": [1, "x"]})])
    assert run.messages[2].is_error and "  - rows[1]: Input should be a valid integer" in text_of(
        run.messages[2]
    )
    stream = FakeStream(assistant(call("a", "rows", {})), assistant("ok"))
    run = await run_loop(stream, [json_schema_tool(None)])
    assert (
        text_of(run.messages[2])
        == 'Tool "rows" declares an output schema but returned no structured content'
    )


async def test_duration_ms_times_execute_only() -> None:
    @tool
    async def nap() -> str:
        """Nap."""
        await anyio.sleep(0.05)
        return "rested"

    def deny(ctx: Any, _signal: Any) -> BeforeToolCallResult | None:
        return BeforeToolCallResult(block=True) if ctx.tool_call.id == "b" else None

    stream = FakeStream(assistant(call("a", "nap", {}), call("b", "nap", {})), assistant("ok"))
    run = await run_loop(stream, [nap], before_tool_call=deny)
    ends = {e.tool_call_id: e for e in run.rec.of("tool_execution_end")}
    assert ends["a"].duration_ms is not None and 40 <= ends["a"].duration_ms < 2000
    assert ends["b"].duration_ms is None  # never executed


async def test_reset_during_a_run_is_refused() -> None:
    started, release = anyio.Event(), anyio.Event()

    @tool
    async def wait() -> str:
        """Wait."""
        started.set()
        await release.wait()
        return "done"

    agent = Agent(
        stream_fn=FakeStream(assistant(call("a", "wait", {})), assistant("ok")),
        model=_model(),
        tools=[wait],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await started.wait()
        with pytest.raises(RuntimeError, match="while a run is going"):
            agent.reset()
        release.set()
    agent.reset()
    assert agent.state.messages == []


def _model() -> Any:
    from workbench.agent import Model

    return Model(id="fake")


async def test_structured_content_and_output_schema_are_kept_in_sessions(tmp_path: Path) -> None:
    from workbench.sessions.reader import read_session
    from workbench.sessions.recorder import start_recording

    agent = Agent(
        stream_fn=FakeStream(assistant(call("a", "weather", {"city": "Oslo"})), assistant("ok")),
        model=_model(),
        tools=[weather],
    )
    recorder = start_recording(agent, workspace=tmp_path, path=tmp_path / "s.jsonl")
    await agent.prompt("go")
    recorder.close()
    session = read_session(tmp_path / "s.jsonl")
    assert session.header.tools[0].output_schema == Weather.model_json_schema()
    [end] = [e for e in session.events if e.type == "tool_execution_end"]
    assert end.result.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert end.duration_ms is not None
