"""UI throughput: does the app slow the agent down, and does the screen keep up?

Runs one scripted run at full speed (1,000 tool calls, 10,000 `on_update` events and
long streamed text) twice: headless (the runtime alone) and with the app attached
(`App.run_test`, a real Textual app at 160x48 rendering to a headless driver). Prints
both times, their ratio, and how long after the last event the screen showed it.

    python benchmarks/ui_throughput.py [--turns 50] [--calls 20] [--updates 10] [--repeat 3]

Targets (issue #5): ratio at most 1.2; last update on screen within one second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from widgets.app import make_app  # noqa: E402
from workbench import gc_policy  # noqa: E402
from workbench.agent import AgentToolResult, tool  # noqa: E402
from workbench.providers.scripted import Scenario  # noqa: E402
from workbench.runtime import RunOptions, build_runtime  # noqa: E402

PARAGRAPH = (
    "The workbench folds every event into its view model at once and redraws at a "
    "bounded rate, so a burst of deltas costs the agent almost nothing. "
)


def make_scenario(turns: int, calls: int, text_chars: int) -> Scenario:
    text = (PARAGRAPH * (text_chars // len(PARAGRAPH) + 1))[:text_chars]
    script = [
        {
            "text": text,
            "tool_calls": [{"name": "chatty", "arguments": {"n": i}} for i in range(calls)],
        }
        for _ in range(turns)
    ]
    script.append({"text": "finished"})
    return Scenario.model_validate({"name": "bench", "turns": script})


def make_tool(updates: int):  # type: ignore[no-untyped-def]
    @tool
    async def chatty(n: int, on_update) -> str:  # type: ignore[no-untyped-def]
        """Send `updates` progress updates, then return."""
        for i in range(updates):
            on_update(AgentToolResult.text(f"call {n}: step {i + 1}/{updates}"))
        return f"call {n} done"

    return chatty


def build(args: argparse.Namespace, workspace: Path):  # type: ignore[no-untyped-def]
    scenario = make_scenario(args.turns, args.calls, args.text)
    options = RunOptions(
        scenario=scenario,
        workspace=workspace,
        pace=math.inf,
        tools=[make_tool(args.updates)],
        allow=["chatty"],
        record=False,
    )
    return build_runtime(options)


async def headless(args: argparse.Namespace, workspace: Path) -> tuple[float, int]:
    runtime = build(args, workspace)
    count = 0

    def counter(_event, _signal=None):  # type: ignore[no-untyped-def]
        nonlocal count
        count += 1

    runtime.agent.subscribe(counter)
    with gc_policy.session_gc():  # the policy the app and `--headless` run under
        start = time.perf_counter()
        await runtime.agent.prompt("go")
        return time.perf_counter() - start, count


async def with_app(args: argparse.Namespace, workspace: Path) -> tuple[float, float, int]:
    runtime = build(args, workspace)
    app = make_app(runtime, prefill="go")
    last_event = 0.0
    count = 0

    def stamp(_event, _signal=None):  # type: ignore[no-untyped-def]
        nonlocal last_event, count
        last_event = time.perf_counter()
        count += 1

    runtime.agent.subscribe(stamp)
    async with app.run_test(size=(160, 48)) as pilot:
        start = time.perf_counter()
        app._run_prompt("go")
        await asyncio.sleep(0)
        await runtime.agent.wait_for_idle()
        while runtime.agent.state.is_streaming:
            await asyncio.sleep(0.001)
        elapsed = time.perf_counter() - start
        # the screen shows the last event once a refresh has synced the final state
        while app.synced_event_count < app.view_state.event_count:
            await asyncio.sleep(0.001)
        await pilot.pause()
        shown = time.perf_counter()
        assert app.view_state.run_state == "finished", app.view_state.run_state
    return elapsed, shown - last_event, count


def measure(args: argparse.Namespace) -> dict[str, float]:
    """One run, in this process: the agent's time (and, with the app, the screen's lag)."""
    with tempfile.TemporaryDirectory() as tmp:
        if args.one == "headless":
            seconds, events = asyncio.run(headless(args, Path(tmp)))
            return {"seconds": seconds, "events": events}
        seconds, lag, events = asyncio.run(with_app(args, Path(tmp)))
        return {"seconds": seconds, "lag": lag, "events": events}


def in_subprocess(args: argparse.Namespace, which: str) -> dict[str, float]:
    """Each run gets a fresh interpreter, so neither inherits the other's heap (and its
    garbage collections) or warm caches."""
    command = [
        sys.executable, __file__, "--one", which, "--turns", str(args.turns),
        "--calls", str(args.calls), "--updates", str(args.updates), "--text", str(args.text),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--updates", type=int, default=10)
    parser.add_argument("--text", type=int, default=2000, help="characters of streamed text per turn")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--one", choices=["headless", "app"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args)))
        return
    calls = args.turns * args.calls
    print(
        f"{calls} tool calls, {calls * args.updates} on_update events, "
        f"{args.turns * args.text:,} characters of streamed text, median of {args.repeat}"
    )
    plain, app_times, lags, ratios = [], [], [], []
    for _ in range(args.repeat):
        headless_run = in_subprocess(args, "headless")
        app_run = in_subprocess(args, "app")
        plain.append(headless_run["seconds"])
        app_times.append(app_run["seconds"])
        lags.append(app_run["lag"])
        ratios.append(app_run["seconds"] / headless_run["seconds"])
    h, a = statistics.median(plain), statistics.median(app_times)
    print(f"events per run:          {int(headless_run['events']):,}")
    print(f"headless:                {h:.2f} s")
    print(f"with the app attached:   {a:.2f} s")
    print(f"ratio:                   {a / h:.2f}   (target <= 1.2; per pair: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"last event on screen:    {statistics.median(lags) * 1000:.0f} ms after it (target < 1000)")


if __name__ == "__main__":
    main()
