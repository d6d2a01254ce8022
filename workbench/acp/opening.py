"""Opening an ACP agent's session: `initialize` with the client's capabilities, then
`session/new` (or `session/load`), authenticating first when the agent asks."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from workbench import __version__
from workbench.secret_env import environment

if TYPE_CHECKING:
    from workbench.acp.run import AcpRun


class AcpError(Exception):
    """The agent could not be started or would not open a session."""


async def open_session(run: AcpRun) -> None:
    """`initialize`, then `session/new` with the workspace as `cwd` and the MCP servers
    (or `session/load`), then the mode asked for; the session's notice goes on the bus."""
    from acp import PROTOCOL_VERSION
    from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

    init = await run.conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
            terminal=True,
        ),
        client_info=Implementation(name="agent-workbench", version=__version__),
    )
    data = init.model_dump(mode="json", by_alias=True, exclude_none=True)
    run.agent_info = data
    caps = data.get("agentCapabilities") or {}
    run.takes_images = bool((caps.get("promptCapabilities") or {}).get("image"))
    run.can_load = bool(caps.get("loadSession"))
    servers = [mcp_server(s) for s in run.options.mcp_servers]
    cwd = str(run.options.workspace)
    if run.options.load_session is not None:
        if not run.can_load:
            raise AcpError("the agent cannot load a session (no loadSession capability)")
        response = await run.conn.load_session(
            cwd=cwd, session_id=run.options.load_session, mcp_servers=servers
        )
        run.session_id = run.options.load_session
    else:
        response = await _authenticated(
            run, data, lambda: run.conn.new_session(cwd=cwd, mcp_servers=servers)
        )
        run.session_id = response.session_id
    opened = response.model_dump(mode="json", by_alias=True, exclude_none=True) if response else {}
    modes = opened.get("modes") or {}
    run.modes = list(modes.get("availableModes") or [])
    run.mode = modes.get("currentModeId")
    await run.notice("session", _session_text(run, data), {"initialize": data, **opened})
    if run.options.mode is not None:
        await run.set_mode(run.options.mode)


async def _authenticated(run: AcpRun, init: dict[str, Any], open_session: Any) -> Any:
    """`open_session()`, after `authenticate` if the agent asks for it: with the
    method `--auth` names, else the first one whose environment variables the agent
    has (an API key set for it); a person's login (a browser) is never started."""
    from acp import RequestError

    try:
        return await open_session()
    except RequestError as exc:
        if "auth" not in str(exc).lower():
            raise
    env = {**environment(), **run.options.env}
    methods = init.get("authMethods") or []
    chosen = run.options.auth or next(
        (
            m.get("id")
            for m in methods
            if m.get("type") == "env_var" and all(v.get("name") in env for v in m.get("vars") or [])
        ),
        None,
    )
    if chosen is None:
        offered = ", ".join(str(m.get("id")) for m in methods) or "none"
        raise AcpError(
            f"the agent asks to authenticate and none of its methods ({offered}) has its "
            "variables set; set them, or name one with --auth"
        )
    await run.conn.authenticate(method_id=chosen)
    await run.notice("session", f"authenticated with {chosen}", {"methodId": chosen})
    return await open_session()


def _session_text(run: AcpRun, init: dict[str, Any]) -> str:
    info = init.get("agentInfo") or {}
    name = info.get("title") or info.get("name") or run.label
    version = f" {info['version']}" if info.get("version") else ""
    text = f"ACP agent {name}{version}: session {run.session_id} in {run.options.workspace}"
    if run.modes:
        names = ", ".join(str(m.get("id")) for m in run.modes)
        text += f"\nmodes: {names} (now {run.mode})"
    return text


def mcp_server(config: Any) -> Any:
    """A `McpServerConfig` as ACP's `session/new` names an MCP server."""
    from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

    if config.command:
        program, *args = config.command
        env = [EnvVariable(name=k, value=v) for k, v in config.env.items()]
        return McpServerStdio(name=config.name, command=program, args=list(args), env=env)
    headers = [HttpHeader(name=k, value=v) for k, v in config.headers.items()]
    if config.sse:
        return SseMcpServer(name=config.name, url=config.url, headers=headers, type="sse")
    return HttpMcpServer(name=config.name, url=config.url, headers=headers, type="http")


def agent_label(command: list[str]) -> str:
    """A short name for the agent: its package or program, without paths or versions."""
    words = [w for w in command if not w.startswith("-")]
    for word in words:
        base = os.path.basename(word)
        if base not in ("npx", "node", "python", "python3", "uvx", "bunx", "pnpm", "sh", "env"):
            return base.rsplit("@", 1)[0] if base.count("@") > 1 else base
    return os.path.basename(words[0]) if words else "agent"
