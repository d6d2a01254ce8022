"""What the agent asks the client to do (`fs/*`, `terminal/*`), judged like a tool call.

Each request is judged as the built-in tool that does the same would be: reading a
file as `read_file(path=...)`, writing as `write_file(path=...)`, a terminal as
`run_command(command=...)`, with the path first confined to the workspace (the
workspace's own refusal) and the rules and protected paths of the gate. A rule that
allows or denies decides; a call that would be asked about is served only inside an
ACP call the agent asked about and was allowed (that permission covers what the
call does through the client), or under `--approve all`; otherwise it is refused,
and the agent gets the reason as its error. Each request is a line of the running
call's history (or a notice when no call runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp import RequestError

from workbench.tools.workspace import Workspace, WorkspaceError

if TYPE_CHECKING:
    from workbench.acp.calls import AcpCall
    from workbench.acp.run import AcpRun

MAX_READ_BYTES = 16 * 1024 * 1024


def _refuse(message: str) -> RequestError:
    return RequestError(-32000, message)


async def judge(run: AcpRun, tool: str, args: dict[str, Any], what: str) -> None:
    """Let the request through, or raise the `RequestError` the agent gets."""
    gate = run.runtime.gate
    call = run.covering_call()
    if gate is None:
        return
    try:
        judged = {k: gate.workspace.canonical(v) if k == "path" else v for k, v in args.items()}
    except (WorkspaceError, OSError) as exc:
        await _say(run, call, f"client refused: {what}", str(exc))
        raise _refuse(f"Permission denied: {exc}") from None
    rule, action, target = gate.judge(tool, judged)
    shown = f"{rule.text} ({rule.source})" if rule is not None else "no rule"
    if action == "deny":
        await _say(run, call, f"client refused: {what}", f"denied by {shown}")
        raise _refuse(f"Permission denied by rule {shown}")
    covered = call is not None and call.allowed and target is None
    if action == "allow" or covered or (gate.policy == "all" and target is None):
        why = f"allowed by {shown}" if action == "allow" else "under the call's permission"
        await _say(run, call, f"client: {what}", why)
        return
    why = f"{tool} needs approval ({shown})" + (f"; {target} is protected" if target else "")
    await _say(run, call, f"client refused: {what}", why)
    raise _refuse(
        f"Permission denied: {why}, and no call the agent asked about and was allowed covers it"
    )


async def _say(run: AcpRun, call: AcpCall | None, label: str, detail: str) -> None:
    if call is not None:
        await run.note(call, label, detail)
    else:
        await run.notice("info", f"{label} ({detail})", {})


def _workspace(run: AcpRun) -> Workspace:
    return Workspace(run.options.workspace)


async def read_text_file(run: AcpRun, path: str, line: int | None, limit: int | None) -> str:
    await judge(run, "read_file", {"path": path}, f"read {path}")
    try:
        real = _workspace(run).resolve(path)
        if real.stat().st_size > MAX_READ_BYTES:
            raise _refuse(f"{path} is larger than {MAX_READ_BYTES} bytes")
        text = real.read_text(encoding="utf-8", errors="replace")
    except (WorkspaceError, OSError) as exc:
        raise _refuse(str(exc)) from None
    if line is None and limit is None:
        return text
    rows = text.splitlines(keepends=True)
    start = max(0, (line or 1) - 1)
    end = len(rows) if limit is None else start + max(0, limit)
    return "".join(rows[start:end])


async def write_text_file(run: AcpRun, path: str, content: str) -> None:
    await judge(run, "write_file", {"path": path}, f"write {path}")
    try:
        real = _workspace(run).resolve(path)
        if real.is_dir():
            raise _refuse(f"{path} is a directory")
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text(content, encoding="utf-8")
    except (WorkspaceError, OSError) as exc:
        raise _refuse(str(exc)) from None
