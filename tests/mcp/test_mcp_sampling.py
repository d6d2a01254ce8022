"""A sampling request's parameters reach the model where the provider takes them
(max tokens, temperature, stop sequences, the model a person picked), and a reply is
cut at the first stop sequence whatever the provider did."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import mcp_types

from workbench.agent import AssistantMessage, Model, TextContent
from workbench.mcp.requests import Sampler, cut_at_stop
from workbench.providers.settings import OpenAISettings


class Recording:
    """A provider with settings (as an OpenAI-compatible one has) that notes them."""

    def __init__(self, reply: str) -> None:
        self.settings = OpenAISettings(model="run-model", max_tokens=4000, temperature=1.0)
        self.reply = reply
        self.seen: list[OpenAISettings] = []

    @property
    def model(self) -> Model:
        return Model(id=self.settings.model, provider="openai")

    async def __call__(self, model: Model, context: Any, options: Any) -> AsyncIterator[Any]:
        self.seen.append(self.settings)
        message = AssistantMessage(content=[TextContent(text=self.reply)], stop_reason="stop")

        class Done:
            type = "done"

        done = Done()
        done.message = message  # type: ignore[attr-defined]
        yield done


def params(**extra: Any) -> mcp_types.CreateMessageRequestParams:
    message = mcp_types.SamplingMessage(
        role="user", content=mcp_types.TextContent(type="text", text="hi")
    )
    return mcp_types.CreateMessageRequestParams(messages=[message], max_tokens=50, **extra)


async def test_the_requests_parameters_and_the_picked_model_reach_the_provider() -> None:
    provider = Recording("one two END three")
    sampler = Sampler(provider, provider.model)
    assert sampler.configurable()
    result = await sampler(params(temperature=0.3, stop_sequences=["END"]), "other-model")
    sent = provider.seen[0]
    assert (sent.max_tokens, sent.temperature, sent.model) == (50, 0.3, "other-model")
    assert sent.extra_body == {"stop": ["END"]}
    assert provider.settings.max_tokens == 4000  # the run's own settings are untouched
    assert result.model == "other-model"
    assert result.content.text == "one two "  # type: ignore[union-attr]
    assert result.stop_reason == "stopSequence"


async def test_without_a_model_pick_the_runs_model_answers() -> None:
    provider = Recording("fine")
    result = await Sampler(provider, provider.model)(params())
    assert result.model == "run-model" and result.stop_reason == "endTurn"
    assert provider.seen[0].temperature == 1.0  # not asked for: the run's own


def test_cut_at_the_first_stop_sequence() -> None:
    assert cut_at_stop("a b c", ["c", "b"]) == ("a ", True)
    assert cut_at_stop("a b c", ["x", ""]) == ("a b c", False)
