"""Task-augmented tool calls (MCP 2025-11-25 tasks).

A tool whose `execution.taskSupport` is "required" cannot be called plainly: the
server refuses ("requires task augmentation"). Such a call is sent with `task`
metadata; the server answers at once with a task, which is then polled with
`tasks/get` (at the interval the server asks for, within bounds); each new status
and status message becomes a line of the call's live output. Once the task is over
(or needs input), `tasks/result` fetches its result, an ordinary `CallToolResult`.
An abort of the call sends `tasks/cancel` and fails the call at once.

The SDK (2.3) has the tasks types but no client calls for them. `tasks/*` requests
go through its session like any other; the task-creating `tools/call` cannot: the
session checks every `tools/call` answer against `CallToolResult` (tasks are not in
its method table), so `_create` sends that one request through the session's
dispatcher, as `send_request` would, and reads the answer as a `CreateTaskResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import mcp_types
from mcp import ClientSession
from mcp.shared.dispatcher import CallOptions
from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value

from workbench.agent import AbortSignal
from workbench.mcp.catalog import ask
from workbench.mcp.failures import McpCallError, reason_text

TTL_MS = 30 * 60 * 1000
"""How long the server is asked to keep a task (and its result)."""
POLL_SECONDS = (0.05, 0.5, 5.0)
"""The shortest, default and longest wait between two `tasks/get`."""
CANCEL_SECONDS = 5.0
"""How long an abort waits for the server to confirm `tasks/cancel`."""
OVER = ("completed", "failed", "cancelled")


def needs_task(tool: mcp_types.Tool) -> bool:
    """Whether `tool` must be called as a task."""
    execution = getattr(tool, "execution", None)
    return execution is not None and execution.task_support == "required"


def status_line(task: mcp_types.Task) -> str:
    line = f"task {task.task_id}: {task.status}"
    return f"{line}: {task.status_message}" if task.status_message else line


async def call_as_task(
    session: ClientSession,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    signal: AbortSignal | None = None,
    note: Callable[[str], None] = lambda line: None,
) -> mcp_types.CallToolResult:
    """Call `tool` as a task and return its result; `note` gets each status line.

    Raises:
        McpCallError: the server refused or failed a request, cancelled the task
            itself, or the call was aborted (`details["aborted"]` is True).
    """
    what = f"tools/call {tool}"
    request = mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(
            name=tool,
            arguments=arguments,
            task=mcp_types.TaskMetadata(ttl=TTL_MS),
        )
    )
    created = await ask(server, f"{what} (as a task)", lambda: _create(session, request))
    task: mcp_types.Task = created.task
    note(status_line(task))
    result: mcp_types.CallToolResult | None = None
    with anyio.CancelScope() as scope:
        remove = signal.add_listener(lambda _reason: scope.cancel()) if signal else None
        try:
            if signal is not None and signal.aborted:
                scope.cancel()
            task = await _until_over(session, server, task, note)
            if task.status == "cancelled":
                raise McpCallError(
                    f"MCP server {server} cancelled task {task.task_id} of {what}"
                    + (f": {task.status_message}" if task.status_message else ""),
                    {"server": server, "tool": tool, "task": task.task_id},
                )
            payload = mcp_types.GetTaskPayloadRequest(
                params=mcp_types.GetTaskPayloadRequestParams(task_id=task.task_id)
            )
            result = await ask(
                server,
                f"tasks/result {task.task_id}",
                lambda: session.send_request(payload, mcp_types.CallToolResult),
                timeout=None,
            )
        finally:
            if remove is not None:
                remove()
    if result is not None:
        return result
    await _cancel(session, task.task_id, note)
    why = "Operation aborted"
    reason = signal.reason if signal is not None else None
    if reason is not None and reason_text(reason) != why:
        why += f": {reason_text(reason)}"
    raise McpCallError(
        f"{why} (MCP server {server} was sent tasks/cancel for task {task.task_id} of {tool})",
        {"server": server, "tool": tool, "task": task.task_id, "aborted": True},
    )


async def _create(
    session: ClientSession, request: mcp_types.CallToolRequest
) -> mcp_types.CreateTaskResult:
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: CallOptions = {}
    session._stamp(data, options)  # the negotiated version's headers
    headers = options.setdefault("headers", {})
    headers.setdefault(MCP_NAME_HEADER, encode_header_value(request.params.name))
    raw = await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)
    return mcp_types.CreateTaskResult.model_validate(raw, by_name=False)


async def _until_over(
    session: ClientSession, server: str, task: mcp_types.Task, note: Callable[[str], None]
) -> mcp_types.Task:
    shown = status_line(task)
    while task.status not in OVER and task.status != "input_required":
        low, default, high = POLL_SECONDS
        wait = task.poll_interval / 1000 if task.poll_interval else default
        await anyio.sleep(min(high, max(low, wait)))
        get = mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=task.task_id))
        task = await ask(
            server,
            f"tasks/get {task.task_id}",
            partial(session.send_request, get, mcp_types.GetTaskResult),
        )
        line = status_line(task)
        if line != shown:
            note(line)
            shown = line
    return task


async def _cancel(session: ClientSession, task_id: str, note: Callable[[str], None]) -> None:
    request = mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id))
    with anyio.move_on_after(CANCEL_SECONDS, shield=True):
        try:
            await session.send_request(request, mcp_types.CancelTaskResult)
            note(f"task {task_id}: cancelled by the client")
        except Exception as exc:  # noqa: BLE001 - the call fails as aborted either way
            note(f"task {task_id}: tasks/cancel failed: {exc}")
