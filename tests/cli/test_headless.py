"""`workbench --headless`: what the readable log and the JSON lines say about a run."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from workbench.agent import AgentToolResult, tool
from workbench.agent.types import ImageContent
from workbench.cli.args import build_parser, parse
from workbench.cli.headless import run_headless
from workbench.providers.scripted import Scenario, ScriptedToolCall, ScriptedTurn
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions.codec import Decoder


def headless_log(options: RunOptions, prompt: str | None = None) -> str:
    runtime = build_runtime(options)
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    anyio.run(run_headless, runtime, prompt or runtime.prompt, console)
    return out.getvalue()


@pytest.fixture(scope="module")
def demo_log() -> str:
    return headless_log(RunOptions(approve="all", record=False))


def test_a_malformed_call_prints_its_raw_text(demo_log: str) -> None:
    line = next(x for x in demo_log.splitlines() if "→ search_files" in x)
    assert '{"pattern": "apiBaseUrl", "path": "."' in line and "not a JSON object" in line
    assert "search_files {}" not in demo_log


def test_validate_failed_shows_the_field_errors(demo_log: str) -> None:
    lines = demo_log.splitlines()
    at = next(i for i, x in enumerate(lines) if "validate failed" in x)
    assert "- edits: Input should be a valid list" in lines[at + 1]
    assert "■" not in lines[at + 1]


def test_done_and_error_lines_carry_the_call_id(demo_log: str) -> None:
    ends = [x for x in demo_log.splitlines() if x.lstrip().startswith("■")]
    assert len(ends) == 9
    assert all("[call_" in x for x in ends)
    assert any("read_file error" in x and "[call_1_3]" in x for x in ends)


def test_streamed_output_is_printed_once(demo_log: str) -> None:
    assert demo_log.count("[2/4] checking required keys...") == 1
    assert "(5 line(s) streamed above)" in demo_log


def test_an_image_only_result_is_described(tmp_path: Path) -> None:
    @tool
    async def screenshot() -> AgentToolResult:
        """Take a screenshot."""
        return AgentToolResult(content=[ImageContent(data="iVBORw0KGgo=", mime_type="image/png")])

    scenario = Scenario(
        name="image",
        turns=[
            ScriptedTurn(tool_calls=[ScriptedToolCall(name="screenshot")]),
            ScriptedTurn(text="ok"),
        ],
    )
    log = headless_log(
        RunOptions(
            scenario=scenario, workspace=tmp_path, tools=[screenshot], approve="all", record=False
        ),
        "look",
    )
    result = log.splitlines()[
        log.splitlines().index(next(x for x in log.splitlines() if "result screenshot" in x)) + 1
    ]
    assert "[image: image/png, 8 bytes]" in result


def test_an_empty_result_says_so(tmp_path: Path) -> None:
    @tool
    async def nothing() -> str:
        """Return nothing."""
        return ""

    scenario = Scenario(
        name="empty",
        turns=[
            ScriptedTurn(tool_calls=[ScriptedToolCall(name="nothing")]),
            ScriptedTurn(text="ok"),
        ],
    )
    log = headless_log(
        RunOptions(
            scenario=scenario, workspace=tmp_path, tools=[nothing], approve="all", record=False
        ),
        "go",
    )
    assert "(empty result)" in log


@pytest.mark.parametrize(
    "argv",
    [
        ["--headless", "--approve", "all", "List the files"],
        ["List the files", "--headless", "--approve", "all"],
        ["--headless", "List the files", "--approve", "all"],
        ["--approve", "all", "--headless", "--step", "List the files", "--no-record"],
    ],
)
def test_the_prompt_may_come_anywhere(argv: list[str]) -> None:
    args = parse(build_parser(), argv)
    assert args.headless == "List the files"
    assert args.approve == "all"


def test_the_app_takes_a_positional_prompt_as_its_first_message() -> None:
    args = parse(build_parser(), ["--step", "List the files"])
    assert args.headless is None and args.prompt == "List the files"


def workbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_jsonl_prints_one_event_a_line_in_the_session_format(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    run = workbench(
        "--headless", "--approve", "all", "--jsonl", "--pace", "0", "--session", str(session)
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    decoder = Decoder()
    events = [decoder.decode(json.loads(line)) for line in lines]
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"
    requests = [e for e in events if e.type == "provider_request"]
    assert len(requests) == 5 and all(r.simulated for r in requests)  # the CLI simulates the wire
    recorded = session.read_text().splitlines()[1:]  # the first line is the header
    kinds = [json.loads(x)["event"]["type"] for x in recorded]
    # the session also holds the workspace's checkpoint records and the run's summary line,
    # which are not events
    assert kinds[-1] == "session_summary"
    assert [k for k in kinds[:-1] if not k.startswith("workspace_")] == [e.type for e in events]
    assert kinds[1] == "workspace_manifest"
    assert "recording the session to" in run.stderr  # the log goes to stderr, stdout is JSON


def test_the_recording_line_comes_before_the_run() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "workbench", "--headless", "hi", "--scenario", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    assert run.stdout.splitlines()[0].startswith("workbench: recording the session to ")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--jsonl"], "add --headless"),
        (["--headless", "one", "two"], "two prompts"),
    ],
)
def test_prompt_mistakes_are_one_line(argv: list[str], needle: str) -> None:
    run = workbench(*argv)
    assert run.returncode == 2 and needle in run.stderr and len(run.stderr.splitlines()) == 1
