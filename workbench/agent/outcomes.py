"""What a tool call came to: the records a batch passes along, and the error results.

A call is `Prepared` once its arguments passed and `before_tool_call` let it through,
and `Finalized` once it has its result (run or not); `result_message` turns that into
the `ToolResultMessage` the model sees. `AfterToolCallResult` and `on_error_result`
overrides are applied by `overridden` (pi's shallow merge: a field left None keeps the
executed value).
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from workbench.agent.abort import AbortSignal
from workbench.agent.tool import AgentTool, AgentToolResult
from workbench.agent.types import ToolCall, ToolResultMessage


@dataclass
class Finalized:
    tool_call: ToolCall
    result: AgentToolResult
    is_error: bool
    injected: bool = False
    duration_ms: float | None = None
    """How long execute() took (None: it never ran)."""


@dataclass
class Prepared:
    tool_call: ToolCall
    tool: AgentTool
    args: BaseModel
    signal: AbortSignal
    """The call's own abort signal (linked to the run's)."""
    duration_ms: float | None = None
    """Set once execute() has returned (or raised)."""


@dataclass
class ToolBatch:
    messages: list[ToolResultMessage]
    terminate: bool


def error_result(text: str, details: Any = None) -> AgentToolResult:
    return AgentToolResult.text(text, details={} if details is None else details)


def aborted_result(text: str, details: Any = None) -> AgentToolResult:
    """An error result for a call the abort signal ended or skipped; `details` says so,
    so views need not guess from the text."""
    extra = details if isinstance(details, dict) else {}
    return AgentToolResult.text(text, details={**extra, "aborted": True})


def overridden(
    call: ToolCall,
    result: AgentToolResult,
    is_error: bool,
    override: Any,
    duration_ms: float | None = None,
) -> Finalized:
    """`result` with the fields an `AfterToolCallResult` sets replaced (no deep merge)."""
    merged = AgentToolResult(
        content=result.content if override.content is None else override.content,
        details=result.details if override.details is None else override.details,
        terminate=result.terminate if override.terminate is None else override.terminate,
        structured_content=result.structured_content,
    )
    is_error = is_error if override.is_error is None else override.is_error
    return Finalized(
        call, merged, is_error, injected=bool(override.injected), duration_ms=duration_ms
    )


def is_aborted(result: AgentToolResult) -> bool:
    details = result.details
    return isinstance(details, dict) and details.get("aborted") is True


def describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


TRACEBACK_FRAMES = 5
"""How many of a raising tool's last frames (in its own code) its result keeps."""

_OURS = tuple(
    str(Path(__file__).resolve().parents[2] / package) + os.sep
    for package in ("workbench", "widgets", "tools")
)
_LIBRARIES = tuple(
    {str(Path(p).resolve()) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
)


def exception_result(exc: Exception) -> AgentToolResult:
    """A raising tool's error result. The model reads the exception's type and message,
    as Python's last traceback line says them (`KeyError: 'no task with id 3'`: a bare
    message can mean anything); `details["traceback"]` keeps the last frames in the
    tool's own code (not the workbench's, nor a library's) for the inspector, the
    session and export. An exception's own `details` (a command's exit code) stay.
    The built-in tools raise messages written for the model: those go as they are."""
    stack = traceback.extract_tb(exc.__traceback__)
    message = str(exc)
    if stack and stack[-1].filename.startswith(_OURS):
        text = describe(exc)
    else:
        text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    details = getattr(exc, "details", None)
    if details is not None and not isinstance(details, dict):
        return error_result(text, details)
    frames = [
        f
        for f in stack
        if not f.filename.startswith(_OURS + _LIBRARIES) and not f.filename.startswith("<frozen")
    ][-TRACEBACK_FRAMES:]
    extra = dict(details or {})
    if frames:
        listed = "".join(traceback.StackSummary.from_list(frames).format())
        extra["traceback"] = f"{listed}{text}"
    return error_result(text, extra)


def aborted_text(signal: AbortSignal) -> str:
    reason = signal.reason
    return (
        "Operation aborted"
        if reason in (None, "Operation aborted")
        else f"Operation aborted: {reason}"
    )


def result_message(f: Finalized) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=f.tool_call.id,
        tool_name=f.tool_call.name,
        content=f.result.content,
        details=f.result.details,
        is_error=f.is_error,
        injected=f.injected,
        structured_content=f.result.structured_content,
    )
