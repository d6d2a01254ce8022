"""The `${input:ID}`s of mcp.json entries (VS Code's prompted inputs), given once a run.

Before a server whose entry uses one starts, each of its inputs is taken from
`$WORKBENCH_MCP_INPUT_<ID>` (the ID upper-cased, other characters as `_`), else asked
of a person (the app's dialog; one question at a time, each input once, whichever
servers share it), else the server fails to start with an error naming the input and
its variable. A value is never written to a session, and one marked `"password": true`
is masked wherever the wire and the servers' texts are shown or recorded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from workbench.mcp.config import McpServerConfig
from workbench.mcp.failures import InputMissing
from workbench.mcp.variables import McpInput
from workbench.secret_env import environment

Ask = Callable[[str, McpInput], Awaitable[str | None]]
"""Asks a person for input `McpInput` of server `str`; None if they did not give it."""


class InputBook:
    """The inputs given so far in this run, and who to ask for the others."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.ask: Ask | None = None
        self._secrets: dict[str, str] = {}
        self._lock: anyio.Lock | None = None

    async def fill(self, config: McpServerConfig) -> McpServerConfig:
        """`config` with its inputs given.

        Raises:
            InputMissing: one was neither in the environment nor given by a person.
        """
        self._lock = self._lock or anyio.Lock()
        async with self._lock:
            for spec in config.inputs:
                if spec.id not in self.values:
                    self._give(spec, await self._value(config, spec))
        return config.with_inputs(self.values)

    async def _value(self, config: McpServerConfig, spec: McpInput) -> str:
        value = environment().get(spec.env_name)
        if value is not None:
            return value
        about = f" ({spec.description})" if spec.description else ""
        asked = f"{config.source} asks for ${{input:{spec.id}}}{about}"
        if self.ask is None:
            raise InputMissing(
                f"{asked}, which only a person can give: set {spec.env_name} in the "
                "workbench's environment (or start the app, which asks for it)"
            )
        value = await self.ask(config.name, spec)
        if value is None:
            raise InputMissing(
                f"{asked}, which was not given (F7, r asks again; or set {spec.env_name})"
            )
        return value

    def _give(self, spec: McpInput, value: str) -> None:
        self.values[spec.id] = value
        if spec.password and value:
            self._secrets[value] = f"[REDACTED:input {spec.id}]"

    def mask(self, text: str) -> str:
        """`text` with the values of password inputs masked."""
        for value, mark in self._secrets.items():
            text = text.replace(value, mark)
        return text
