"""A long run's memory: what grows is the transcript, not every request ever made."""

from __future__ import annotations

import tracemalloc

from workbench.agent import Agent, tool
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.stepper import Stepper

TURNS = 2_000


@tool
async def noop() -> str:
    """Do nothing."""
    return "ok"


async def test_a_2000_turn_run_through_the_stepper_keeps_no_request_alive() -> None:
    """Each request's stream holds its copy of the transcript; a stream left open after
    its reply kept all of them (45 MB here at 2,000 turns, quadratic in turns). Closed,
    the run's memory is the transcript's own: 4,000 messages, about 7 MB."""
    scenario = Scenario.model_validate(
        {
            "name": "long",
            "turns": [{"tool_calls": [{"name": "noop", "arguments": {}}]}] * TURNS
            + [{"text": "done"}],
        }
    )
    provider = ScriptedProvider(scenario)
    stepper = Stepper()
    agent = Agent(stream_fn=stepper.wrap_stream_fn(provider), model=provider.model, tools=[noop])
    traced: list[int] = []

    def at_turn_start(event: object, _signal: object = None) -> None:
        if getattr(event, "type", None) == "turn_start":
            traced.append(tracemalloc.get_traced_memory()[0])

    agent.subscribe(at_turn_start)
    tracemalloc.start()
    try:
        await agent.prompt("go")
    finally:
        tracemalloc.stop()
    assert len(agent.state.messages) == 2 * TURNS + 2
    grown = traced[-1] - traced[1]
    assert grown < 20_000_000, f"{grown / 1e6:.1f} MB held after {TURNS} turns"
