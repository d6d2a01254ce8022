"""Loop overhead: microseconds per tool call with a no-op tool and the scripted provider.

Every shape runs the real loop (`run_agent_loop`) against the scripted provider at
full speed (no pacing), with a tool that does nothing, so what is measured is the
runtime itself: streaming events, the argument pipeline, hooks plumbing, events,
result messages. Each shape is run several times; the table shows the median.

The same shapes run through pi-agent-core 0.85.1's `runAgentLoop` under Node
(`loop_overhead_pi.mjs`: a scripted stream function with the same events, a no-op
tool), alternating with the Python runs, so the ratio compares like with like on a
shared machine. Wall-clock and CPU time are both shown; the ratio is of medians.

    python benchmarks/loop_overhead.py            # the three shapes, Python and Node
    python benchmarks/loop_overhead.py --install  # first: npm-install pi into --pi-dir
    python benchmarks/loop_overhead.py --agent    # also through the stateful Agent
    python benchmarks/loop_overhead.py --profile "1000x1"   # cProfile one shape

Figures before and after the runtime's optimisations: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel  # noqa: E402

from workbench import gc_policy  # noqa: E402
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

SHAPES: list[tuple[str, int, int]] = [
    # name, turns, calls per turn
    ("1000x1", 1000, 1),
    ("1x2000", 1, 2000),
    ("100x20", 100, 20),
]

PI_PACKAGE = "@earendil-works/pi-agent-core@0.85.1"
PI_DIR = Path.home() / ".cache" / "workbench" / "pi-bench"
PI_SCRIPT = Path(__file__).with_name("loop_overhead_pi.mjs")
WARM_UP = 2
"""Runs before the measured ones on each side (imports and caches; Node's JIT)."""


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


async def run_loop_once(turns: int, calls: int) -> tuple[float, float]:
    provider = ScriptedProvider(scenario(turns, calls))
    config = AgentLoopConfig(model=provider.model)
    context = AgentContext(system_prompt="", messages=[], tools=[NOOP])
    start, cpu = time.perf_counter(), time.process_time()
    messages = await run_agent_loop(
        [UserMessage(content="go")], context, config, _sink, stream_fn=provider
    )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    expected = 1 + turns * (1 + calls) + 1
    assert len(messages) == expected, (len(messages), expected)
    return elapsed, cpu


async def run_agent_once(turns: int, calls: int) -> tuple[float, float]:
    provider = ScriptedProvider(scenario(turns, calls))
    agent = Agent(stream_fn=provider, model=provider.model, tools=[NOOP])
    agent.subscribe(lambda event, signal: None)
    start, cpu = time.perf_counter(), time.process_time()
    await agent.prompt("go")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert len(agent.state.messages) == 1 + turns * (1 + calls) + 1
    return elapsed, cpu


Samples = tuple[list[float], list[float]]
"""Wall-clock and CPU µs per tool call, one of each a run."""


def measure(turns: int, calls: int, repeats: int, via_agent: bool) -> Samples:
    """µs per tool call of `repeats` runs (after the warm-up runs)."""
    runner = run_agent_once if via_agent else run_loop_once
    for _ in range(WARM_UP):
        asyncio.run(runner(turns, calls))
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()  # under gc_policy: what this run left is collected, the rest frozen
        w, c = asyncio.run(runner(turns, calls))
        wall.append(w / (turns * calls) * 1e6)
        cpu.append(c / (turns * calls) * 1e6)
    return wall, cpu


def measure_pi(turns: int, calls: int, repeats: int, pi_dir: Path) -> Samples:
    """The same shape through pi-agent-core under Node, in a process of its own."""
    out = subprocess.run(
        ["node", "--expose-gc", str(PI_SCRIPT), str(pi_dir), str(turns), str(calls), str(repeats)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    return figures["wall_us"], figures["cpu_us"]


def install_pi(pi_dir: Path) -> None:
    pi_dir.mkdir(parents=True, exist_ok=True)
    manifest = pi_dir / "package.json"
    if not manifest.exists():
        manifest.write_text('{"name": "pi-bench", "private": true}\n')
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(pi_dir), PI_PACKAGE],
        check=True,
    )


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
    parser.add_argument("--repeats", type=int, default=5, help="measured runs a round")
    parser.add_argument("--rounds", type=int, default=2, help="Python/Node alternations")
    parser.add_argument("--agent", action="store_true", help="also measure through Agent")
    parser.add_argument("--profile", metavar="SHAPE", help='cProfile one shape, e.g. "1000x1"')
    parser.add_argument("--pi-dir", type=Path, default=PI_DIR, help="where pi is installed")
    parser.add_argument("--install", action="store_true", help=f"npm install {PI_PACKAGE}")
    parser.add_argument("--no-pi", action="store_true", help="Python only")
    parser.add_argument(
        "--gc-policy",
        action="store_true",
        help="run Python under workbench.gc_policy, as the app and the headless runner do",
    )
    args = parser.parse_args()
    if args.install:
        install_pi(args.pi_dir)
    if args.gc_policy:
        gc_policy.apply()
    if args.profile:
        profile(args.profile, args.agent)
        return
    with_pi = not args.no_pi
    installed = args.pi_dir / "node_modules" / "@earendil-works" / "pi-agent-core"
    if with_pi and not installed.exists():
        sys.exit(f"pi-agent-core is not in {args.pi_dir}: run with --install (or --no-pi)")

    modes: list[tuple[str, bool | None]] = [("run_agent_loop", False)]
    if args.agent:
        modes.append(("Agent.prompt", True))
    python_modes = list(modes)
    if with_pi:
        modes.append(("pi 0.85.1", None))  # None: Node
    print(
        f"Python {sys.version.split()[0]}"
        + (f", Node {_node_version()}" if with_pi else "")
        + f"; µs per tool call, medians of {args.rounds} x {args.repeats} runs"
        + " (wall clock / CPU)"
        + (", Python under workbench.gc_policy" if args.gc_policy else "")
    )
    header = f"{'shape':<8}" + "".join(f"{name:>22}" for name, _ in modes)
    if with_pi:
        header += "".join(f"{'ratio ' + name[:5]:>20}" for name, _ in python_modes)
    print(header)
    print("-" * len(header))
    for name, turns, calls in SHAPES:
        samples: dict[bool | None, Samples] = {via: ([], []) for _, via in modes}
        for round_ in range(args.rounds):
            for _, via in modes if round_ % 2 == 0 else modes[::-1]:  # alternate who goes first
                if via is None:
                    taken = measure_pi(turns, calls, args.repeats, args.pi_dir)
                else:
                    taken = measure(turns, calls, args.repeats, via)
                _extend(samples[via], taken)
        row = f"{name:<8}" + "".join(f"{_pair(samples[via]):>22}" for _, via in modes)
        if with_pi:
            node = samples[None]
            for _, via in python_modes:
                ratio_wall = statistics.median(samples[via][0]) / statistics.median(node[0])
                ratio_cpu = statistics.median(samples[via][1]) / statistics.median(node[1])
                row += f"{f'{ratio_wall:.2f} / {ratio_cpu:.2f}':>20}"
        print(row, flush=True)


def _extend(into: Samples, samples: Samples) -> None:
    into[0].extend(samples[0])
    into[1].extend(samples[1])


def _pair(samples: Samples) -> str:
    return f"{statistics.median(samples[0]):.1f} / {statistics.median(samples[1]):.1f}"


def _node_version() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
