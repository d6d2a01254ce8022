"""The agent runtime: a Python port of pi-agent-core 0.85.1's tool system.

Everything public is importable from here. Nothing in this package imports
Textual, Rich, the widgets or the tools.
"""

from workbench.agent.abort import AbortController, AbortError, AbortSignal
from workbench.agent.agent import Agent, AgentState, EventBus
from workbench.agent.arguments import (
    ArgumentsError,
    ArgumentsOutcome,
    format_validation_error,
    run_argument_pipeline,
)
from workbench.agent.config import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    ArgumentsFailedContext,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ErrorResultContext,
    LlmContext,
    NextTurn,
    StreamFn,
    StreamOptions,
    ToolCallAborts,
    TurnContext,
    default_convert_to_llm,
)
from workbench.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    AssistantMessageEvent,
    Event,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolArgumentsEvent,
    ToolExecutionEndEvent,
    ToolExecutionPhaseEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from workbench.agent.loop import (
    AgentEventStream,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from workbench.agent.tool import AgentTool, AgentToolResult, to_tool_result, tool
from workbench.agent.types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "AbortController", "AbortError", "AbortSignal", "AfterToolCallContext",
    "AfterToolCallResult", "Agent", "AgentContext", "AgentEndEvent", "AgentEvent",
    "AgentEventStream", "AgentLoopConfig", "AgentStartEvent", "AgentState", "AgentTool",
    "AgentToolResult", "ArgumentsError", "ArgumentsFailedContext", "ArgumentsOutcome", "AssistantMessage",
    "AssistantMessageEvent", "BeforeToolCallContext", "BeforeToolCallResult", "ErrorResultContext", "Event",
    "EventBus", "ImageContent", "LlmContext", "Message", "MessageEndEvent",
    "MessageStartEvent", "MessageUpdateEvent", "Model", "NextTurn", "StopReason",
    "StreamFn", "StreamOptions", "TextContent", "ThinkingContent", "ToolArgumentsEvent",
    "ToolCall", "ToolCallAborts", "ToolExecutionEndEvent", "ToolExecutionPhaseEvent", "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent", "ToolResultMessage", "TurnContext", "TurnEndEvent",
    "TurnStartEvent", "Usage", "UserMessage", "agent_loop", "agent_loop_continue",
    "default_convert_to_llm", "format_validation_error", "run_agent_loop",
    "run_agent_loop_continue", "run_argument_pipeline", "to_tool_result", "tool",
]
