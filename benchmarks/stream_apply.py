"""Streamed deltas applied to a message: does the cost grow with the length alone?

One tool call's argument string streamed six characters a delta (the scripted
provider's chunk size) through `StreamBuilder`, which applies each event to its
message with `apply_stream_event`, and then read back as a session reader does
(`Decoder`, which applies them to its rebuilt message). Prints the time per size
and per megabyte: a flat time per megabyte is linear growth. `--naive` adds the
same loop written as a model's own `block.raw_arguments += delta`, for comparison
(at most `--naive-limit` characters: it grows with the square of the length).

    python benchmarks/stream_apply.py [--sizes 100000 400000 1600000] [--naive]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.agent import MessageUpdateEvent, Model, ToolCall  # noqa: E402
from workbench.json_text import loads  # noqa: E402
from workbench.providers.stream_builder import StreamBuilder  # noqa: E402
from workbench.sessions.codec import Decoder, encode  # noqa: E402

CHUNK = 6


def build(size: int) -> tuple[float, list[bytes]]:
    """Seconds to stream a `size`-character argument through the builder, and the
    session lines of its updates."""
    builder = StreamBuilder(Model(id="m", provider="p"))
    delta = "x" * CHUNK
    started = time.perf_counter()
    index, events = builder.begin_tool_call("call_1", "write_file")
    for _ in range(size // CHUNK):
        events += builder.tool_call_delta(index, delta)
    events += builder.close_all()
    seconds = time.perf_counter() - started
    message = builder.message
    lines = [
        encode(n, 0.0, MessageUpdateEvent(message=message, assistant_message_event=e))
        for n, e in enumerate(events, 1)
    ]
    return seconds, lines


def read(lines: list[bytes]) -> float:
    """Seconds for a session reader to decode the lines (rebuilding the message)."""
    decoded = [loads(line) for line in lines]
    decoder = Decoder()
    started = time.perf_counter()
    for line in decoded:
        decoder.decode(line)
    return time.perf_counter() - started


def naive(size: int) -> float:
    call = ToolCall(id="call_1", name="write_file", raw_arguments="")
    delta = "x" * CHUNK
    started = time.perf_counter()
    for _ in range(size // CHUNK):
        call.raw_arguments = (call.raw_arguments or "") + delta
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 400_000, 1_600_000])
    parser.add_argument("--naive", action="store_true")
    parser.add_argument("--naive-limit", type=int, default=400_000)
    args = parser.parse_args()
    print(f"one tool call's arguments, {CHUNK} characters a delta")
    head = f"{'characters':>12} {'deltas':>8} {'builder s':>10} {'s/MB':>6}"
    print(head + f" {'reader s':>9} {'s/MB':>6}")
    for size in args.sizes:
        built, lines = build(size)
        decoded = read(lines)
        mb = size / 1e6
        row = f"{size:>12,} {size // CHUNK:>8,} {built:>10.3f} {built / mb:>6.2f}"
        row += f" {decoded:>9.3f} {decoded / mb:>6.2f}"
        if args.naive and size <= args.naive_limit:
            row += f"   naive +=: {naive(size):.3f} s"
        print(row)


if __name__ == "__main__":
    main()
