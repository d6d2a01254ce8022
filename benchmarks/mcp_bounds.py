"""What a hostile stdio MCP server costs the workbench: one huge answer line, and a
storm of `tools/list_changed` notifications.

    python benchmarks/mcp_bounds.py            # the workbench's transport
    python benchmarks/mcp_bounds.py --sdk      # the SDK's own stdio reader, to compare

Prints, for answers of 10, 20, 40 and 100 MB, the seconds a `tools/call` took and how
it ended; then, for 10,000 `tools/list_changed`, the seconds until the call that sent
them returned and how many times the tools were listed again.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.mcp import McpHub, McpServerConfig  # noqa: E402
from workbench.mcp.client import McpCallError  # noqa: E402

HOSTILE = Path(__file__).resolve().parent.parent / "tests" / "mcp" / "servers" / "hostile.py"
SIZES = (10, 20, 40, 100)
STORM = 10_000
LIMIT = 180.0


async def main(sdk: bool) -> None:
    if sdk:
        import mcp

        import workbench.mcp.transports as transports

        transports.stdio_client = mcp.stdio_client  # type: ignore[assignment]
    hub = McpHub([McpServerConfig(name="hostile", command=(sys.executable, str(HOSTILE)))])
    relists = 0
    listing = hub.connections[0].relist_tools

    async def counted() -> None:
        nonlocal relists
        relists += 1
        await listing()

    hub.connections[0].relist_tools = counted  # type: ignore[method-assign]
    await hub.start()
    try:
        connection = hub.connections[0]
        for megabytes in SIZES:
            started = time.perf_counter()
            outcome = "answered"
            with anyio.move_on_after(LIMIT) as scope:
                try:
                    result = await connection.call_tool("big", {"megabytes": megabytes})
                    outcome = f"answered, {len(result.content[0].text):,} characters"  # type: ignore[union-attr]
                except McpCallError as exc:
                    outcome = f"failed: {str(exc)[:120]}"
            took = time.perf_counter() - started
            if scope.cancelled_caught:
                outcome = f"no answer within {LIMIT:.0f} s"
            print(f"{megabytes:>4} MB line: {took:6.2f} s  {outcome}")
            if scope.cancelled_caught:
                break
        started = time.perf_counter()
        with anyio.move_on_after(LIMIT):
            await connection.call_tool("storm", {"count": STORM})
        print(
            f"{STORM:,} tools/list_changed: {time.perf_counter() - started:6.2f} s "
            f"until the call returned, {relists} re-lists so far"
        )
        await anyio.sleep(1)
        print(f"  {relists} re-lists one second later")
    finally:
        await hub.aclose()


if __name__ == "__main__":
    anyio.run(main, "--sdk" in sys.argv)
