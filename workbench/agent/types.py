"""Content blocks, messages and models: the transcript's vocabulary.

Every type is a pydantic model so a whole transcript round-trips through JSON
(`model_dump(mode="json")` / `model_validate`); unions are discriminated by
`type` (content) and `role` (messages), as in pi-ai.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workbench.agent.clock import now_ms

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]


class TextContent(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImageContent(BaseModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ThinkingContent(BaseModel):
    type: Literal["thinking"] = "thinking"
    thinking: str


class ToolCall(BaseModel):
    """A request from the model to run a tool. Nothing has run yet."""

    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The arguments as parsed by the provider ({} when they did not parse)."""
    raw_arguments: str | None = None
    """The exact argument string the model produced, when the provider has one."""


UserContent = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]
ToolResultContent = UserContent


class Usage(BaseModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: float = Field(default_factory=now_ms)


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    provider: str = ""
    timestamp: float = Field(default_factory=now_ms)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for c in self.content if isinstance(c, ToolCall)]

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.content if isinstance(c, TextContent))


class ToolResultMessage(BaseModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent] = Field(default_factory=list)
    details: Any = None
    is_error: bool = False
    injected: bool = False
    """Workbench addition: the result was written by a person, not by executing the tool."""
    structured_content: Any = None
    """The result's structured content (see `AgentToolResult`); not sent to the model."""
    timestamp: float = Field(default_factory=now_ms)

    @property
    def text(self) -> str:
        return result_text(self.content)


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]


class Model(BaseModel):
    """Which model a provider talks to. Providers keep their own connection settings."""

    model_config = ConfigDict(frozen=True)

    id: str
    provider: str = "scripted"
    base_url: str | None = None


def result_text(content: list[Any]) -> str:
    """A tool result's text: its text blocks, one per line (as pi sends them to the
    model), so two blocks never run into each other."""
    texts = [c.text for c in content if isinstance(c, TextContent)]
    return texts[0] if len(texts) == 1 else "\n".join(texts)


def text_of(content: str | list[Any]) -> str:
    """The plain text of any message content (images and tool calls are skipped)."""
    if isinstance(content, str):
        return content
    return "".join(getattr(c, "text", "") for c in content)
