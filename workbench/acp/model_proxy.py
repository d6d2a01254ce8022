"""The agent's model traffic in the ACP run: a workbench proxy in front of the model.

With `AcpOptions.proxy`, the run starts a proxy (`workbench.proxy`) on a free port
of 127.0.0.1 before the agent, and starts the agent with its model's base URL
pointed at it (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`,
as `workbench proxy -- COMMAND` sets them). Each request the agent's model gets,
and its response, goes on the run's bus: the network view shows it next to the
run's `session/prompt` lines, and the run's session records it.

The proxy only watches here. The agent's calls are judged when the agent asks
about them (its permission requests), so the proxy reads no rules file and holds
no response. The agent's own key goes through as the agent sent it (it is never
recorded).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.acp.opening import AcpError

if TYPE_CHECKING:
    from workbench.acp.run import AcpRun

LINKED = ("provider_request", "provider_response", "response_released")
"""The proxy's events that go on the run's bus (the conversations' own tool calls are
the agent's, already shown from its ACP messages)."""


def upstream_of(env: Mapping[str, str]) -> str:
    """The model's base URL as the agent would have used it (the proxy's upstream),
    from the agent's environment.

    Raises:
        AcpError: no base URL variable is set.
    """
    anthropic = env.get("ANTHROPIC_BASE_URL")
    if anthropic:  # the Anthropic SDKs add /v1/messages; the proxy wants the /v1
        return anthropic.rstrip("/") + "/v1"
    for name in ("OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        if env.get(name):
            return env[name]
    raise AcpError(
        "--proxy needs the model's base URL: set ANTHROPIC_BASE_URL, OPENAI_BASE_URL or "
        "GOOGLE_GEMINI_BASE_URL for the agent, or give --proxy-upstream URL"
    )


@asynccontextmanager
async def model_proxy(run: AcpRun, env: dict[str, str]) -> AsyncIterator[dict[str, str]]:
    """Run the proxy for the block; yields the agent's environment pointed at it."""
    from workbench.proxy.launcher import client_environment
    from workbench.proxy.server import Proxy, ProxyOptions

    upstream = run.options.proxy_upstream or upstream_of(env)
    try:
        proxy = Proxy(
            ProxyOptions(
                upstream=upstream,
                port=0,
                record=False,
                workspace=run.options.workspace,
                rules_file=Path(os.devnull),  # watching only: the run's gate judges
            )
        )
    except ValueError as exc:
        raise AcpError(f"--proxy: {exc}") from None

    async def forward(event: Any, _signal: Any = None) -> None:
        if event.type in LINKED:
            await run.agent.publish(event)

    proxy.on_conversation.append(lambda conv: conv.agent.subscribe(forward))
    try:
        proxy.bind()
    except OSError as exc:
        raise AcpError(f"--proxy: cannot listen on 127.0.0.1: {exc}") from None
    async with proxy.running():
        run.proxy_url = proxy.url
        text = f"the agent's model requests go through the proxy at {proxy.url} to {upstream}"
        await run.notice("info", text, {"proxy": proxy.url, "upstream": upstream})
        yield client_environment(env, proxy.url, token=None, has_upstream_key=False)
