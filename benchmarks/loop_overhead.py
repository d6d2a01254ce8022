"""Loop overhead: microseconds per tool call with a no-op tool and the scripted provider.

Every shape runs the real loop (`run_agent_loop`) against the scripted provider at
full speed (no pacing), with a tool that does nothing, so what is measured is the
runtime itself: streaming events, the argument pipeline, hooks plumbing, events,
result messages. Each shape is run several times; the table shows the median.

    python benchmarks/loop_overhead.py            # the three reference shapes
    python benchmarks/loop_overhead.py --agent    # also through the stateful Agent
    python benchmarks/loop_overhead.py --profile "1000x1"   # cProfile one shape

Reference: pi-agent-core 0.85.1 under Node 20, measured side by side with this
benchmark; figures before and after the runtime's optimisations: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel  # noqa: E402

from workbench.agent import (  # noqa: E402
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    TextContent,
    UserMessage,
    run_agent_loop,
)
from workbench.providers.scripted import (  # noqa: E402
    Scenario,
    ScriptedProvider,
    ScriptedToolCall,
    ScriptedTurn,
)

SHAPES: list[tuple[str, int, int, float]] = [
    # name, turns, calls per turn, pi-agent-core 0.85.1 / Node 20 (µs per call)
    ("1000x1", 1000, 1, 53.0),
    ("1x2000", 1, 2000, 23.0),
    ("100x20", 100, 20, 21.0),
]


class NoArgs(BaseModel):
    pass


_RESULT = AgentToolResult(content=[TextContent(text="ok")])


async def _noop(tool_call_id, params, signal, on_update) -> AgentToolResult:  # noqa: ANN001
    return _RESULT


NOOP = AgentTool(
    name="noop", label="No-op", description="Does nothing.", parameters=NoArgs, execute=_noop
)


def scenario(turns: int, calls: int) -> Scenario:
    tool_turns = [
        ScriptedTurn(tool_calls=[ScriptedToolCall(name="noop", arguments={}) for _ in range(calls)])
        for _ in range(turns)
    ]
    return Scenario(name=f"bench-{turns}x{calls}", turns=[*tool_turns, ScriptedTurn(text="done")])


async def _sink(event) -> None:  # noqa: ANN001
    return None


async def run_loop_once(turns: int, calls: int) -> float:
    provider = ScriptedProvider(scenario(turns, calls))
    config = AgentLoopConfig(model=provider.model)
    context = AgentContext(system_prompt="", messages=[], tools=[NOOP])
    start = time.perf_counter()
    messages = await run_agent_loop(
        [UserMessage(content="go")], context, config, _sink, stream_fn=provider
    )
    elapsed = time.perf_counter() - start
    expected = 1 + turns * (1 + calls) + 1
    assert len(messages) == expected, (len(messages), expected)
    return elapsed


async def run_agent_once(turns: int, calls: int) -> float:
    provider = ScriptedProvider(scenario(turns, calls))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[NOOP])
    agent.subscribe(lambda event, signal: None)
    start = time.perf_counter()
    await agent.prompt("go")
    elapsed = time.perf_counter() - start
    assert len(agent.state.messages) == 1 + turns * (1 + calls) + 1
    return elapsed


def measure(turns: int, calls: int, repeats: int, via_agent: bool) -> float:
    """Median µs per tool call over `repeats` runs (after one warm-up run)."""
    runner = run_agent_once if via_agent else run_loop_once
    asyncio.run(runner(turns, calls))  # warm-up: imports, pydantic schema caches
    samples = []
    for _ in range(repeats):
        gc.collect()
        samples.append(asyncio.run(runner(turns, calls)))
    return statistics.median(samples) / (turns * calls) * 1e6


def profile(shape: str, via_agent: bool) -> None:
    turns, calls = (int(n) for n in shape.split("x"))
    runner = run_agent_once if via_agent else run_loop_once
    asyncio.run(runner(turns, calls))
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(runner(turns, calls))
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(35)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--agent", action="store_true", help="also measure through Agent")
    parser.add_argument("--profile", metavar="SHAPE", help='cProfile one shape, e.g. "1000x1"')
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, args.agent)
        return

    modes = [("run_agent_loop", False)] + ([("Agent.prompt", True)] if args.agent else [])
    print(f"Python {sys.version.split()[0]}, median of {args.repeats} runs, µs per tool call")
    header = f"{'shape':<16}{'turns':>7}{'calls':>7}"
    header += "".join(f"{name:>17}" for name, _ in modes) + f"{'pi 0.85.1/Node':>17}"
    print(header)
    print("-" * len(header))
    for name, turns, calls, reference in SHAPES:
        row = f"{name:<16}{turns:>7}{calls:>7}"
        for _, via_agent in modes:
            row += f"{measure(turns, calls, args.repeats, via_agent):>17.1f}"
        print(row + f"{reference:>17.0f}", flush=True)


if __name__ == "__main__":
    main()
