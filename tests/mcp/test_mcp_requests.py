"""What servers ask of the client, without a person: sampling runs on the run's model
only with --approve all, elicitation is declined; both say so."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest

from tests.mcp.helpers import calls, mcp_run
from workbench.agent import AssistantMessage, TextContent
from workbench.agent.types import Model
from workbench.mcp.requests import PolicyAsker, Sampler, to_messages


class EchoModel:
    """A provider that answers with what it was asked (and remembers the request)."""

    def __init__(self) -> None:
        self.contexts: list[Any] = []

    async def __call__(self, model: Any, context: Any, options: Any) -> Any:
        self.contexts.append(context)
        text = "short: " + context.messages[-1].content[0].text
        message = AssistantMessage(content=[TextContent(text=text)], stop_reason="stop")

        class Done:
            type = "done"

        done = Done()
        done.message = message  # type: ignore[attr-defined]
        yield done


@pytest.mark.parametrize("approve", ["all", "rules", "none"])
async def test_sampling_follows_the_approval_policy(approve: str) -> None:
    notes: list[str] = []
    model = EchoModel()
    async with mcp_run(calls(("toolbox__summarize", {"text": "a long text"}))) as run:
        run.hub.asker = PolicyAsker(approve, notes.append)
        run.hub.use_model(model, Model(id="echo-1", provider="test"))
        await run.agent.prompt("go")
        result = run.result("toolbox__summarize")
    if approve == "all":
        assert not result.is_error
        assert result.text == "summary (echo-1): short: a long text"
        (context,) = model.contexts
        assert context.system_prompt == "Summarize in five words." and context.tools == []
        assert notes == ["MCP server toolbox asked the model for a reply: sent (--approve all)"]
    else:
        assert result.is_error and "the user declined the sampling request" in result.text
        assert not model.contexts
        assert notes == [
            f"MCP server toolbox asked the model for a reply: declined (--approve {approve}; "
            "--approve all lets it through)"
        ]


async def test_elicitation_is_declined_without_a_person() -> None:
    notes: list[str] = []
    async with mcp_run(calls(("toolbox__ask_contact", {}), ("toolbox__ask_login", {}))) as run:
        run.hub.asker = PolicyAsker("all", notes.append)
        await run.agent.prompt("go")
        assert run.result("toolbox__ask_contact").text == "no contact: decline"
        assert run.result("toolbox__ask_login").text == "login: decline"
    assert notes[0] == (
        "MCP server toolbox asked for input ('Who should get the report?'): "
        "declined, nobody is here to answer"
    )


async def test_a_failing_model_is_the_servers_error_not_the_runs() -> None:
    class Broken:
        async def __call__(self, model: Any, context: Any, options: Any) -> Any:
            class Error:
                type = "error"
                message = AssistantMessage(stop_reason="error", error_message="HTTP 500")

            yield Error()

    async with mcp_run(calls(("toolbox__summarize", {"text": "x"}))) as run:
        run.hub.asker = PolicyAsker("all")
        run.hub.use_model(Broken(), Model(id="m"))
        await run.agent.prompt("go")
        result = run.result("toolbox__summarize")
        assert result.is_error and "the model failed to answer: HTTP 500" in result.text
        assert run.agent.state.messages[-1].content[0].text == "done"  # type: ignore[union-attr]


def test_sampling_messages_become_the_runtimes() -> None:
    messages = [
        mcp_types.SamplingMessage(
            role="user", content=mcp_types.TextContent(type="text", text="hi")
        ),
        mcp_types.SamplingMessage(
            role="assistant", content=mcp_types.TextContent(type="text", text="hello")
        ),
        mcp_types.SamplingMessage(
            role="user",
            content=mcp_types.AudioContent(type="audio", data="AA", mime_type="audio/wav"),
        ),
    ]
    user, assistant, audio = to_messages(messages)
    assert user.content[0].text == "hi" and assistant.text == "hello"
    assert audio.content[0].text == "[audio content]"
    assert isinstance(Sampler(EchoModel(), Model(id="m")).model, Model)
