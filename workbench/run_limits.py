"""`--max-turns`: stop a run cleanly after N model turns.

The limit is a `should_stop_after_turn` hook, so the run stops only between turns:
every tool call of the last turn has its result and the transcript stays valid (a
later prompt or `continue_` goes on from it). When it stops a run that would have
gone on, it publishes a `RunLimitEvent`, so the app and the headless log can say so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from workbench.agent import TurnContext
from workbench.agent.config import resolve
from workbench.bus_events import RunLimitEvent

StopHook = Callable[[TurnContext], Any]


class TurnLimit:
    """Counts the model turns of each run; `should_stop` ends the run at `max_turns`.

    Args:
        max_turns: turns per run (a run starts with each prompt).
        publish: where the `RunLimitEvent` goes (the agent's `publish`).
        then: the agent's own `should_stop_after_turn`, asked first (it may stop earlier).
    """

    def __init__(
        self,
        max_turns: int,
        publish: Callable[[Any], Awaitable[None]],
        then: StopHook | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"--max-turns must be at least 1 (got {max_turns})")
        self.max_turns = max_turns
        self.publish = publish
        self.then = then
        self.turns = 0
        self.reached = False
        """The last run was stopped by the limit."""

    def on_event(self, event: Any, _signal: Any = None) -> None:
        if event.type == "agent_start":
            self.turns = 0
            self.reached = False

    async def should_stop(self, turn: TurnContext) -> bool:
        self.turns += 1
        if self.then is not None and await resolve(self.then(turn)):
            return True
        if self.turns < self.max_turns or not turn.message.tool_calls:
            return False  # under the limit, or the run ends here anyway
        self.reached = True
        await self.publish(RunLimitEvent(max_turns=self.max_turns, turns=self.turns))
        return True
