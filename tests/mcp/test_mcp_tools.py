"""MCP tools through the real SDK client and the real Agent loop, against the toolbox
server (tests/mcp/servers/toolbox.py) run as a stdio subprocess."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import anyio

from tests.mcp.helpers import TOOLBOX, calls, mcp_run
from workbench.agent import ImageContent, TextContent, ToolExecutionUpdateEvent
from workbench.mcp.tools import ProgressLog

ORDER = {
    "order": {
        "customer": "ann",
        "items": [{"sku": "abc", "quantity": 2}, {"sku": "xyz", "quantity": 1, "color": "blue"}],
        "priority": "high",
    }
}


async def test_tools_join_under_the_server_prefix() -> None:
    async with mcp_run() as run:
        tools = {t.name: t for t in run.agent.state.tools}
        assert set(tools) == {
            "toolbox__place_order",
            "toolbox__slow_count",
            "toolbox__fail",
            "toolbox__protocol_error",
            "toolbox__snapshot",
            "toolbox__read_note",
            "toolbox__crash",
            "toolbox__two_blocks",
            "toolbox__exit_soon",
            "toolbox__chatty",
            "toolbox__grow",
            "toolbox__roots",
            "toolbox__ask_contact",
            "toolbox__ask_login",
            "toolbox__summarize",
            "toolbox__add_note",
            "toolbox__link_readme",
        }
        order = tools["toolbox__place_order"]
        assert order.source == "mcp:toolbox" and order.label == "Place an order"
        assert order.description == "Place an order for some items."
        assert isinstance(order.parameters, dict) and "$defs" in order.parameters
        assert order.json_schema is order.parameters
        assert tools["toolbox__fail"].label == "fail"  # no title: the MCP name
        assert run.hub.report()[0].splitlines()[0] == f"MCP server toolbox: 17 tools ({TOOLBOX})"
    assert run.agent.state.tools == []  # leaving the hub takes its tools away


async def test_nested_arguments_are_validated_before_the_server_sees_them() -> None:
    bad = {"order": {"customer": "ann", "items": [{"sku": "a", "quantity": 0, "color": "pink"}]}}
    turn = calls(("toolbox__place_order", ORDER), ("toolbox__place_order", bad))
    async with mcp_run(turn) as run:
        await run.agent.prompt("order")
    good, invalid = run.results()
    assert not good.is_error
    assert good.text == "order for ann: 3 items [abcx2 (red), xyzx1 (blue)] priority=high"
    assert good.details == {"server": "toolbox", "tool": "place_order"}
    assert good.structured_content == {"result": good.text}  # checked against outputSchema
    assert invalid.is_error
    assert invalid.text.startswith(
        'Validation failed for tool "toolbox__place_order":\n'
        "  - order.items[0].sku: String should have at least 3 characters\n"
        "  - order.items[0].quantity: Input should be greater than or equal to 1\n"
        "  - order.items[0].color: Input should be 'red', 'green' or 'blue'\n"
        "  - order.priority: Field required\n\nReceived arguments:\n"
    )
    stages = run.of_type("tool_arguments")
    assert [s.failed_stage for s in stages] == [None, "validate"]
    assert stages[0].validated == ORDER


async def test_progress_notifications_become_updates() -> None:
    async with mcp_run(calls(("toolbox__slow_count", {"n": 3, "delay": 0.05}))) as run:
        await run.agent.prompt("count")
    updates = [e for e in run.events if isinstance(e, ToolExecutionUpdateEvent)]
    assert [u.partial_result.details["progress"] for u in updates] == [1, 2, 3]
    assert updates[-1].partial_result.content[0].text == (  # type: ignore[union-attr]
        "progress 1/3 (33%): step 1 of 3\n"
        "progress 2/3 (67%): step 2 of 3\n"
        "progress 3/3 (100%): step 3 of 3"
    )
    assert run.result("toolbox__slow_count").text == "counted to 3"


async def test_errors_and_content_types() -> None:
    turn = calls(
        ("toolbox__fail", {"reason": "no stock"}),
        ("toolbox__protocol_error", {}),
        ("toolbox__snapshot", {}),
        ("toolbox__read_note", {}),
    )
    async with mcp_run(turn) as run:
        await run.agent.prompt("go")
    fail = run.result("toolbox__fail")
    assert fail.is_error and "refused: no stock" in fail.text
    assert fail.details == {"server": "toolbox", "tool": "fail", "is_error": True}
    protocol = run.result("toolbox__protocol_error")
    assert protocol.is_error and protocol.text == (
        "MCP server toolbox answered tools/call protocol_error with error -32001: "
        "the backend is unavailable"
    )
    note = run.result("toolbox__read_note")
    assert note.details["resources"] == [{"uri": "note://one", "name": "note://one"}]
    image = run.result("toolbox__snapshot")
    assert not image.is_error and len(image.content) == 1
    block = image.content[0]
    assert isinstance(block, ImageContent) and block.mime_type == "image/png"
    assert base64.b64decode(block.data).startswith(b"\x89PNG")
    note = run.result("toolbox__read_note")
    assert note.content == [TextContent(text="[resource note://one (text/plain)]\nhello note")]


async def _wait_for(path: Path, seconds: float = 5.0) -> bool:
    with anyio.move_on_after(seconds):
        while not path.exists():
            await anyio.sleep(0.02)
    return path.exists()


async def test_aborting_the_run_cancels_the_call_on_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    slow = {"n": 100, "delay": 0.05, "marker": str(marker)}
    aborted_at: list[float] = []
    async with mcp_run(
        calls(("toolbox__slow_count", slow)), calls(("toolbox__snapshot", {}))
    ) as run:

        def abort_on_progress(event: Any, _signal: Any = None) -> None:
            if isinstance(event, ToolExecutionUpdateEvent) and not aborted_at:
                aborted_at.append(time.monotonic())
                run.agent.abort("enough")

        run.agent.subscribe(abort_on_progress)
        await run.agent.prompt("count")
        ended = time.monotonic()
        result = run.result("toolbox__slow_count")
        assert result.is_error and result.text == (
            "Operation aborted: enough (MCP server toolbox was sent notifications/cancelled "
            "for slow_count)"
        )
        assert result.details["aborted"] is True
        assert ended - aborted_at[0] < 1.0  # promptly: well inside the 2 s abort grace
        assert await _wait_for(marker)  # the server saw notifications/cancelled
        await run.agent.prompt("again")  # the server and the hub go on
        assert not run.result("toolbox__snapshot").is_error


async def test_aborting_one_call_leaves_the_batch_and_the_run(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    slow = {"n": 100, "delay": 0.05, "marker": str(marker)}
    turn = calls(("toolbox__slow_count", slow), ("toolbox__place_order", ORDER))
    async with mcp_run(turn) as run:

        def abort_slow_call(event: Any, _signal: Any = None) -> None:
            if isinstance(event, ToolExecutionUpdateEvent) and len(run.of_type(event.type)) == 2:
                run.agent.abort_tool_call(event.tool_call_id)

        run.agent.subscribe(abort_slow_call)
        await run.agent.prompt("go")
        slow_result = run.result("toolbox__slow_count")
        assert slow_result.is_error and slow_result.text.startswith("Operation aborted")
        assert not run.result("toolbox__place_order").is_error
        assert run.agent.state.messages[-1].content[0].text == "done"  # type: ignore[union-attr]
        assert await _wait_for(marker)


async def test_progress_log_keeps_the_latest_lines() -> None:
    seen: list[Any] = []
    log = ProgressLog(seen.append)
    for i in range(250):
        await log(i, None, None)
    text = seen[-1].content[0].text
    assert len(text.splitlines()) == 200 and text.endswith("progress 249")
