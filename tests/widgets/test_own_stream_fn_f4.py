"""F4 and the summary show the calls of a stream_fn of your own: what the loop handed
it, when its reply ended, and the usage the reply carried."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console
from textual.widgets import OptionList, Static

from tests.widgets.helpers import send, wait_for
from workbench import embed
from workbench.agent import (
    Agent,
    AssistantMessage,
    AssistantMessageEvent,
    LlmContext,
    Model,
    StreamOptions,
    TextContent,
    ToolCall,
    Usage,
    tool,
)
from workbench.widgets.app import make_app
from workbench.widgets.network_view import NetworkViewScreen

MODEL = Model(id="my-model", provider="mine")


@tool
def shout(word: str) -> str:
    """Say it louder."""
    return word.upper()


async def my_stream(
    model: Model, context: LlmContext, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    """Two turns: a tool call, then text; usage on each reply."""
    asked = any(m.role == "toolResult" for m in context.messages)
    if asked:
        reply = AssistantMessage(
            content=[TextContent(text="HELLO it is")], usage=Usage(input=30, output=4)
        )
    else:
        call = ToolCall(id="c1", name="shout", arguments={"word": "hello"})
        reply = AssistantMessage(
            content=[call], stop_reason="toolUse", usage=Usage(input=20, output=7)
        )
    yield AssistantMessageEvent(type="start", partial=AssistantMessage(model=model.id))
    yield AssistantMessageEvent(type="done", message=reply)


async def test_f4_lists_each_call_of_your_stream_fn_and_the_summary_counts_them(
    tmp_path: Path,
) -> None:
    agent = Agent(stream_fn=my_stream, model=MODEL, tools=[shout])
    with embed.attach(agent, workspace=tmp_path, approve="all", record=False) as runtime:
        app = make_app(runtime)
        async with app.run_test(size=(140, 44)) as pilot:
            await send(pilot, app, lambda: app.view_state.run_state == "finished")
            await wait_for(pilot, lambda: all(r.response for r in app.view_state.network.values()))
            assert len(app.view_state.network) == 2
            await pilot.press("f4")
            await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
            assert app.screen.query_one(OptionList).option_count == 2
            detail = str(app.screen.query_one("#request-detail", Static).render())
            assert "YOUR stream_fn" in detail and '"name": "shout"' in detail
            assert "tokens 20 in · 7 out" in detail
            console = Console(width=140, record=True, file=io.StringIO())
            console.print(app.screen._summary())
            summary = console.export_text()
    session = next(line for line in summary.splitlines() if "session" in line).split()
    assert session[-3:-1] == ["50", "11"], summary  # both turns' tokens in and out
    assert agent.stream_fn is my_stream  # given back as it was
