"""Text from an MCP server that is not valid Unicode costs nothing: a tool result holding
the JSON escape of a lone surrogate, or bytes that are not UTF-8 on its stdout or
stderr, reach the model, the session file, the wire log and the MCP view (F7) with
each bad character as U+FFFD, and the view shows everything through `literal`."""

from __future__ import annotations

import math
import shlex
import sys
from pathlib import Path

import anyio
import pytest

from tests.mcp.helpers import SERVERS, calls, mcp_run
from workbench.agent import ToolExecutionEndEvent
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.sanitize import safe
from workbench.sessions import read_session
from workbench.widgets.mcp_servers import server_details

GARBAGE = shlex.join([sys.executable, str(SERVERS / "garbage.py"), "--surrogates"])


async def test_lone_surrogates_from_a_server_become_replacement_characters(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    scenario = Scenario.model_validate(
        {
            "name": "surrogates",
            "turns": [
                calls(("garbage__surrogate", {})),
                calls(("garbage__raw_bytes", {})),
                {"text": "done"},
            ],
        }
    )
    path = tmp_path / "run.jsonl"
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path / "ws",
            tools=[],
            approve="all",
            allow=["mcp:garbage"],
            mcp=[GARBAGE],
            session=path,
            pace=math.inf,
        )
    )
    assert runtime.mcp is not None
    with anyio.fail_after(20):  # before the fix, the raw bytes left the call waiting forever
        async with runtime.mcp.attach(runtime.agent):
            await runtime.agent.prompt("go")
            connection = runtime.mcp.connection("garbage")
            view = server_details(connection, ["garbage__surrogate"]).plain
            stderr = connection.stderr_lines()
            wire = [entry.text for entry in connection.wire.entries]

    texts = {
        m.tool_name: (m.is_error, m.text)
        for m in runtime.agent.state.messages
        if m.role == "toolResult"
    }
    assert texts == {
        "garbage__surrogate": (False, "half \ufffd a pair"),
        "garbage__raw_bytes": (False, "raw \ufffd\ufffd\ufffd bytes"),
    }
    assert runtime.agent.state.messages[-1].content[0].text == "done"  # type: ignore[union-attr]
    # the session recorded both results and the end of the run
    ends = [e for e in read_session(path).events if isinstance(e, ToolExecutionEndEvent)]
    assert [e.result.content[0].text for e in ends] == [  # type: ignore[union-attr]
        "half \ufffd a pair",
        "raw \ufffd\ufffd\ufffd bytes",
    ]
    assert stderr == ["stderr \ufffd\ufffd\ufffd lone"]
    assert any('"text":"half \ufffd a pair"' in text for text in wire)
    assert any('"text":"raw \ufffd\ufffd\ufffd bytes"' in text for text in wire)
    # the F7 view: the stderr line and both answers on the wire, nothing unsafe
    assert "  stderr \ufffd\ufffd\ufffd lone\n" in view
    assert "half \ufffd a pair" in view and "raw \ufffd\ufffd\ufffd bytes" in view
    assert "not JSON-RPC" not in view
    assert safe(view)
    assert "Traceback" not in capfd.readouterr().err


async def test_arguments_holding_a_lone_surrogate_are_refused_not_altered(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with mcp_run(
        calls(("toolbox__fail", {"reason": "x\ud800y"})), calls(("toolbox__fail", {"reason": "ok"}))
    ) as run:
        await run.agent.prompt("go")
        first, second = run.results()
        connection = run.hub.connection("toolbox")
        sent = [e.summary for e in connection.wire.entries if e.outgoing]
    assert first.is_error and first.text == (
        "Not sent to MCP server toolbox: the arguments hold a lone surrogate (text that is "
        "not valid Unicode), which JSON-RPC cannot carry"
    )
    assert second.text == "Error executing tool fail: refused: ok"  # the server goes on
    assert [s.split(" #")[0] for s in sent if s.startswith("tools/call")] == ["tools/call fail"]
    assert "Traceback" not in capfd.readouterr().err
