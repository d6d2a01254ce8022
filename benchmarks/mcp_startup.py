"""MCP start-up: how long a headless run takes to its first turn with an MCP server,
beside the same run without one and beside the server's own start.

Three measures, each in a fresh process, alternated `--repeat` times, medians printed:

- **server**: the server alone: from starting its process to its answer to
  `initialize` (and to `tools/list`), driven with raw JSON-RPC over its pipes (no SDK);
- **plain**: `workbench --headless go --jsonl --no-record` on a one-turn scenario: from
  starting the process to the first `turn_start` line on stdout;
- **mcp**: the same with `--mcp SERVER`.

The server is `@modelcontextprotocol/server-everything` (stdio), installed with npm into
`$WORKBENCH_TEST_CLIENTS` (default `~/.cache/workbench/test-clients`) on first use, or
the command given with `--server`.

    python benchmarks/mcp_startup.py [--repeat 5] [--server 'COMMAND ARGS'] [--before DIR]

Target (issue 34): mcp <= server's initialize + 0.5 s (the servers start with the app
and the run waits only for their answers). Timing on a busy machine wanders: compare
the medians of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ("@modelcontextprotocol/server-everything", "2026.8.31")


def everything() -> list[str]:
    """server-everything's command, installed into the test clients' cache if missing."""
    root = os.environ.get("WORKBENCH_TEST_CLIENTS")
    cache = Path(root) if root else Path.home() / ".cache" / "workbench" / "test-clients"
    package, version = EVERYTHING
    folder = cache / f"{package.replace('/', '+')}@{version}"
    exe = folder / "node_modules" / ".bin" / "mcp-server-everything"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is needed to install server-everything (or give --server)")
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"{package}@{version}",
            ],
            check=True,
            capture_output=True,
        )
    return [str(exe)]


def server_alone(command: list[str]) -> tuple[float, float]:
    """Seconds from starting the server to its `initialize` answer, and to `tools/list`'s."""
    began = time.monotonic()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None

    def ask(request: dict[str, object]) -> None:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(request) + "\n").encode())
        process.stdin.flush()
        while json.loads(process.stdout.readline()).get("id") != request.get("id"):
            pass

    try:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        initialized = time.monotonic() - began
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        process.stdin.write((json.dumps(note) + "\n").encode())
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        return initialized, time.monotonic() - began
    finally:
        process.kill()
        process.wait()


def first_turn(scenario: Path, extra: list[str], root: Path = ROOT) -> float:
    """Seconds from starting a headless run (of the workbench in `root`) to its first
    `turn_start` event."""
    command = [sys.executable, "-m", "workbench", "--headless", "go", "--jsonl", "--no-record"]
    began = time.monotonic()
    process = subprocess.Popen(
        [*command, "--scenario", str(scenario), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=root,
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if b'"type":"turn_start"' in line:
                return time.monotonic() - began
        raise SystemExit(f"no turn_start from {shlex.join(extra) or 'the plain run'}")
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--server", help="the MCP server's command line (default: server-everything)"
    )
    parser.add_argument(
        "--before", type=Path, help="another checkout of the workbench, measured alternately too"
    )
    args = parser.parse_args()
    server = shlex.split(args.server) if args.server else everything()
    with tempfile.TemporaryDirectory() as folder:
        scenario = Path(folder) / "scenario.json"
        scenario.write_text(json.dumps({"name": "bench", "turns": [{"text": "hello"}]}))
        alone, listed, plain, with_mcp, before = [], [], [], [], []
        for _ in range(args.repeat):
            started, tools = server_alone(server)
            alone.append(started)
            listed.append(tools)
            plain.append(first_turn(scenario, []))
            with_mcp.append(first_turn(scenario, ["--mcp", shlex.join(server)]))
            if args.before is not None:
                before.append(first_turn(scenario, ["--mcp", shlex.join(server)], args.before))
    med = statistics.median
    print(f"server alone: initialize {med(alone):.2f} s, tools/list {med(listed):.2f} s")

    def shown(times: list[float]) -> str:
        return f"{med(times):.2f} s  ({', '.join(f'{t:.2f}' for t in times)})"

    print(f"first turn, no server:    {shown(plain)}")
    print(f"first turn, with server:  {shown(with_mcp)}")
    if before:
        print(f"first turn, with server, {args.before}: {shown(before)}")
    print(f"with - without: {med(with_mcp) - med(plain):+.2f} s")
    target = med(alone) + 0.5
    verdict = "met" if med(with_mcp) <= target else "NOT met"
    print(f"target: with server <= initialize + 0.5 s = {target:.2f} s: {verdict}")


if __name__ == "__main__":
    main()
