"""Resource bounds: time, peak memory and session size for the attacks of issue 16.

Each case runs in a fresh Python process (so its peak RSS is its own) against the
code on PYTHONPATH, which makes the same script measure an older tree too:

    python benchmarks/resource_bounds.py                  # this tree
    python benchmarks/resource_bounds.py --tree /tmp/old  # a `git archive` of another commit
    python benchmarks/resource_bounds.py --only read_file_sparse

The cases are scaled down from the issue's figures (200 MB instead of 2 GB, 10 MB
instead of 40 MB...); a case that does not finish within --limit seconds is
reported as such. Only public APIs that have not changed are used.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MB = 1024 * 1024
CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    CASES[fn.__name__] = fn
    return fn


def _tool(ws: Path, name: str) -> Any:
    from workbench.tools import builtin_tools

    return next(t for t in builtin_tools(ws) if t.name == name)


async def _call(ws: Path, name: str, **args: Any) -> tuple[str, bool]:
    from workbench.agent import AbortController

    tool = _tool(ws, name)
    try:
        result = await tool.execute(
            "c", tool.parameters.model_validate(args), AbortController().signal, lambda _u: None
        )
        return result.content[0].text, False
    except Exception as exc:  # noqa: BLE001 - an error result is a figure too
        return str(exc), True


def _sparse(path: Path, size: int) -> None:
    path.write_text("".join(f"line {i}\n" for i in range(1, 3000)))
    os.truncate(path, size)


@case
async def search_catastrophic(ws: Path) -> dict[str, Any]:
    """search_files(pattern="(a+)+$") over a line of 40 a's (the issue's case)."""
    (ws / "a.txt").write_text("a" * 40 + "!\n")
    text, error = await _call(ws, "search_files", pattern=r"(a|aa)+$")
    return {"error": error, "says": text[:70]}


@case
async def schema_pattern(ws: Path) -> dict[str, Any]:
    """A JSON Schema "pattern": "^(a+)+$" on a 31-character argument (issue 24)."""
    from workbench.agent import AgentTool
    from workbench.agent.arguments import ArgumentsError, validate_arguments

    async def never(*_: Any) -> Any:
        raise AssertionError

    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    tool = AgentTool("t", "T", "d", schema, never)
    try:
        validate_arguments(tool, {"s": "a" * 30 + "!"})
        return {"error": False}
    except ArgumentsError as exc:
        return {"error": True, "says": str(exc)[:70]}


@case
async def read_file_sparse(ws: Path) -> dict[str, Any]:
    """read_file(limit=5) on a 200 MB file: text lines, then one 200 MB line (a hole)."""
    _sparse(ws / "big.log", 200 * MB)
    text, error = await _call(ws, "read_file", path="big.log", limit=5)
    return {"error": error, "result_chars": len(text)}


@case
async def edit_file_sparse(ws: Path) -> dict[str, Any]:
    """edit_file on the same 200 MB file."""
    _sparse(ws / "big.log", 200 * MB)
    edits = [{"old_text": "line 1\n", "new_text": "first\n"}]
    text, error = await _call(ws, "edit_file", path="big.log", edits=edits)
    return {"error": error, "says": text[:70]}


async def _no_newlines(ws: Path, size: int) -> dict[str, Any]:
    command = f"head -c {size} /dev/zero | tr '\\0' x"
    text, error = await _call(ws, "run_command", command=command)
    return {"error": error, "result_chars": len(text)}


@case
async def command_no_newlines(ws: Path) -> dict[str, Any]:
    """run_command printing 10 MB without a newline."""
    return await _no_newlines(ws, 10_000_000)


@case
async def command_no_newlines_40mb(ws: Path) -> dict[str, Any]:
    """The same with 40 MB (the issue's size: quadratic shows)."""
    return await _no_newlines(ws, 40_000_000)


async def _session_of(
    ws: Path, tool: Any, args: dict[str, Any], tools: Any = None
) -> dict[str, Any]:
    from workbench.providers.scripted import Scenario
    from workbench.runtime import RunOptions, build_runtime

    scenario = Scenario.model_validate(
        {
            "name": "big",
            "turns": [{"tool_calls": [{"name": tool, "arguments": args}]}, {"text": "ok"}],
        }
    )
    session = ws / "s.jsonl"
    runtime = build_runtime(
        RunOptions(scenario=scenario, workspace=ws, approve="all", session=session, tools=tools)
    )
    await runtime.agent.prompt("go")
    messages = runtime.agent.state.messages
    return {
        "session_mb": round(session.stat().st_size / MB, 2),
        "to_model_chars": len(messages[2].content[0].text),
    }


@case
async def command_session(ws: Path) -> dict[str, Any]:
    """run_command printing 50 MB of lines, through the runtime: the session file."""
    command = "yes 0123456789abcdefghij | head -c 50000000"
    return await _session_of(ws, "run_command", {"command": command})


@case
async def tool_result_session(ws: Path) -> dict[str, Any]:
    """A tool (as an MCP server's) returning 50 MB of text, through the runtime."""
    from workbench.agent import tool

    @tool
    async def flood() -> str:
        """Returns 50 MB."""
        return "z" * 50_000_000

    return await _session_of(ws, "flood", {}, tools=[flood])


@case
async def command_key(ws: Path) -> dict[str, Any]:
    """Does OPENAI_API_KEY reach a command, and the session file?"""
    os.environ["OPENAI_API_KEY"] = "sk-bench-0123456789abcdef"
    await _session_of(ws, "run_command", {"command": 'echo "$OPENAI_API_KEY"'})
    recorded = (ws / "s.jsonl").read_text()
    return {"key_in_session": "sk-bench-0123456789abcdef" in recorded}


@case
async def setsid_survivor(ws: Path) -> dict[str, Any]:
    """Does a `setsid` child of run_command outlive its call?"""
    command = "setsid sleep 30 >/dev/null 2>&1 & echo $! > pid; echo ok"
    await _call(ws, "run_command", command=command)
    pid = int((ws / "pid").read_text())
    time.sleep(0.3)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        survived = state != "Z"
    except FileNotFoundError:
        survived = False
    if survived:
        os.kill(pid, 9)
    return {"survived": survived}


@case
async def export_session(ws: Path) -> dict[str, Any]:
    """Export (Markdown) of a 100 MB session (2,000 results of 50 KB): what exporting adds
    to the memory the session reader already holds (reading is issue 19's)."""
    from workbench.agent import (
        AssistantMessage,
        MessageEndEvent,
        ToolCall,
        ToolResultMessage,
        TurnStartEvent,
    )
    from workbench.agent.types import TextContent
    from workbench.providers.scripted import Scenario, ScriptedProvider
    from workbench.sessions import Recorder, build_header, read_session
    from workbench.sessions.export import export

    provider = ScriptedProvider(Scenario.model_validate({"name": "x", "turns": [{"text": "x"}]}))
    path = ws / "big.jsonl"
    recorder = Recorder(path, build_header(model=provider.model, tools=[], workspace=ws))
    body = "y" * 50_000
    for i in range(2000):
        call = ToolCall(id=f"c{i}", name="read_file", arguments={"path": "f"})
        recorder.write(TurnStartEvent())
        recorder.write(MessageEndEvent(message=AssistantMessage(content=[call], model="m")))
        result = ToolResultMessage(
            tool_call_id=f"c{i}", tool_name="read_file", content=[TextContent(text=body)]
        )
        recorder.write(MessageEndEvent(message=result))
    recorder.close()
    del body, result, recorder
    session = read_session(path)
    held = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from here
    with (ws / "out.md").open("w", encoding="utf-8") as out:
        try:
            from workbench.sessions.export import iter_export

            for piece in iter_export(session, "md"):
                out.write(piece)
        except ImportError:  # a tree from before export streamed
            out.write(export(session, "md"))
    return {
        "session_mb": round(path.stat().st_size / MB, 1),
        "read_session_rss_mb": held,
        "export_growth_mb": round(_status("VmHWM") - held, 1),
    }


def _status(field: str) -> float:
    """A memory figure of this process from /proc/self/status, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    raise KeyError(field)


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _child(name: str) -> None:
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        started = time.perf_counter()
        figures = anyio.run(CASES[name], ws)
        figures["seconds"] = round(time.perf_counter() - started, 2)
        figures["peak_mb"] = _peak_mb()
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--only", action="append", choices=sorted(CASES))
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    env = {**os.environ, "PYTHONPATH": str(args.tree)}
    for name in args.only or list(CASES):
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--child", name],
                env=env,
                capture_output=True,
                text=True,
                timeout=args.limit,
            )
            lines = done.stdout.strip().splitlines()
            figures = lines[-1] if lines else f"failed: {done.stderr.strip()[-300:]}"
        except subprocess.TimeoutExpired:
            figures = f"did not finish within {args.limit:g} s"
        print(f"{name:22} {figures}   ({time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
