"""What a tool call came to: the records a batch passes along, and the error results.

A call is `Prepared` once its arguments passed and `before_tool_call` let it through,
and `Finalized` once it has its result (run or not); `result_message` turns that into
the `ToolResultMessage` the model sees. `AfterToolCallResult` and `on_error_result`
overrides are applied by `overridden` (pi's shallow merge: a field left None keeps the
executed value).
"""

from __future__ import annotations

from dataclasses import dataclass
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
