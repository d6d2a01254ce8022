"""Helpers for the app's Pilot tests (a unique module name, so no clash with other folders)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from workbench.agent import tool
from workbench.providers.scripted import Scenario


def scenario_of(turns: list[dict[str, Any]], **extra: Any) -> Scenario:
    return Scenario.model_validate({"name": "test", "turns": turns, **extra})


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 10.0) -> None:
    """Let the app run until `condition()` is true (fails the test after `timeout`)."""
    with anyio.fail_after(timeout):
        while not condition():
            await pilot.pause(0.02)
    await pilot.pause()


async def send(
    pilot: Any, app: Any, until: Callable[[], Any], *, text: str = "go", timeout: float = 10.0
) -> None:
    """Type `text` into the prompt, press Enter, and let the app run until `until()`."""
    app.prompt_bar.input.value = text
    await pilot.press("enter")
    await wait_for(pilot, until, timeout)


def blocking_tools():  # type: ignore[no-untyped-def]
    """Two tools: `slow` waits until `release` is set (or its call is aborted), `fast`
    returns at once. Returns (release, [slow, fast])."""
    release = anyio.Event()

    @tool
    async def slow(signal) -> str:  # type: ignore[no-untyped-def]
        """Wait until released (or aborted)."""
        with anyio.CancelScope() as scope:
            signal.add_listener(lambda _reason: scope.cancel())
            await release.wait()
        signal.throw_if_aborted()
        return "slow done"

    @tool
    async def fast() -> str:
        """Return at once."""
        return "fast done"

    return release, [slow, fast]


async def palette_pick(pilot: Any, app: Any, title: str) -> None:
    """Open the command palette, type `title`, and press Enter once the palette lists
    it first (its search runs in a worker: Enter before that picks nothing)."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*title)

    def listed() -> bool:
        commands = app.screen.query_one(CommandList)
        if commands.option_count == 0:
            return False
        first = commands.get_option_at_index(0)
        return title in str(first.prompt)

    await wait_for(pilot, listed)
    await pilot.press("enter")
