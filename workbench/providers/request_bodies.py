"""Request bodies built from the previous request's: each message converted once.

A provider sends the whole transcript with every request, so converting it anew each
time makes a long run's cost grow with the square of its length. The transcript
only grows at its end, and once a message that is not a tool result follows, the
repair and conversion of everything before that message can no longer change (see
`TranscriptRepair`). `RequestBodies` keeps that settled part converted, and for a new
request converts only what came after it: the body is the same as
`build_request_body`'s, and the unchanged messages are the same objects, so the
session recorder finds the shared part of two requests by identity.

When the transcript no longer starts with the settled part followed by a message
that is not a tool result (a rewind, a fork, an edited message), it starts over from
the first message.
"""

from __future__ import annotations

from workbench.agent.config import LlmContext
from workbench.agent.types import Message, ToolResultMessage
from workbench.json_text import without_surrogates
from workbench.providers.openai_messages import (
    JsonDict,
    MalformedArguments,
    TranscriptRepair,
    assemble_body,
    convert_messages,
)
from workbench.providers.settings import OpenAISettings


class RequestBodies:
    """The bodies of one provider's requests (see the module docstring)."""

    def __init__(self) -> None:
        self._settled: list[Message] = []
        """The transcript's messages whose wire form can no longer change."""
        self._repair = TranscriptRepair()
        self._wire: list[JsonDict] = []
        self._replaced = 0
        self._malformed: MalformedArguments | None = None

    def build(
        self, model: str, context: LlmContext, settings: OpenAISettings
    ) -> tuple[JsonDict, list[str]]:
        """What `build_request_body` returns for the same arguments.

        Raises:
            ValueError: the settings ask for something this context cannot satisfy.
        """
        messages = context.messages
        malformed = settings.malformed_arguments
        known = len(self._settled)
        if (
            malformed != self._malformed
            or known > len(messages)
            or messages[:known] != self._settled
            or (known < len(messages) and isinstance(messages[known], ToolResultMessage))
        ):
            self._start_over(malformed)
            known = 0
        settle_at = _last_turn_start(messages)
        if settle_at > known:
            self._settle(messages[known:settle_at], malformed)
        tail = TranscriptRepair(self._repair.dropped_calls)
        for message in messages[len(self._settled) :]:
            tail.add(message)
        tail.close_pending()
        wire, replaced = without_surrogates(
            convert_messages("", tail.out, malformed_arguments=malformed)
        )
        return assemble_body(
            model,
            context,
            settings,
            self._wire + wire,
            self._repair.notes + tail.notes,
            self._replaced + replaced,
        )

    def _start_over(self, malformed: MalformedArguments) -> None:
        self._settled = []
        self._repair = TranscriptRepair()
        self._wire = []
        self._replaced = 0
        self._malformed = malformed

    def _settle(self, messages: list[Message], malformed: MalformedArguments) -> None:
        """Repair and convert `messages`, which a message other than a tool result
        follows (so their calls are closed now, as that message would close them)."""
        repair = self._repair
        first = len(repair.out)
        for message in messages:
            repair.add(message)
        repair.close_pending()
        converted = convert_messages("", repair.out[first:], malformed_arguments=malformed)
        wire, replaced = without_surrogates(converted)
        self._wire += wire
        self._replaced += replaced
        self._settled += messages
        del repair.out[:]  # converted: only the wire form is kept


def _last_turn_start(messages: list[Message]) -> int:
    """The index of the last message that is not a tool result (0 if none)."""
    for index in range(len(messages) - 1, -1, -1):
        if not isinstance(messages[index], ToolResultMessage):
            return index
    return 0
