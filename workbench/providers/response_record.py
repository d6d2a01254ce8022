"""What one response's `ProviderResponseEvent` reports, gathered while it is read.

The OpenAI provider and the proxy's forwarder both read an OpenAI-compatible reply
through a `ChunkReader`; this is the one place that times it, keeps its raw chunks
and turns all that into the event the network view shows.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Protocol

from workbench.bus_events import ProviderResponseEvent


class ReadSoFar(Protocol):
    """What a reader (`ChunkReader`, or a proxy format's) has learned of the response."""

    first_content: bool
    server_model: str | None
    usage: Any
    finish_reason: str | None


class ResponseRecord:
    """One request's id, and its response's HTTP status, timing and raw chunks.

    Args:
        reader: the reader the response is fed to (server model, usage, finish reason).
        capture_chunks: keep every chunk's data for the network view.
    """

    def __init__(self, reader: ReadSoFar, *, capture_chunks: bool) -> None:
        self.reader = reader
        self.request_id = f"req_{uuid.uuid4().hex[:16]}"
        self.chunks: list[str] | None = [] if capture_chunks else None
        self.status: int | None = None
        self.started = 0.0
        """When the request went out (`time.monotonic()`; 0: it never did)."""
        self.ttft_ms: float | None = None
        self.aborted = False
        """The run's abort signal closed the response before it ended."""

    def start(self) -> None:
        self.started = time.monotonic()

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000 if self.started else 0.0

    def keep(self, data: str) -> None:
        """One chunk's data as it came (kept only when capturing)."""
        if self.chunks is not None:
            self.chunks.append(data)

    def mark_first_token(self) -> None:
        """Note the time to first token once the reader has seen content."""
        if self.ttft_ms is None and self.reader.first_content:
            self.ttft_ms = self.elapsed_ms()

    def event(self, error: str | None) -> ProviderResponseEvent:
        """The response event; `error` is the reply's error message, if it failed."""
        return ProviderResponseEvent(
            request_id=self.request_id,
            status=self.status,
            server_model=self.reader.server_model,
            ttft_ms=self.ttft_ms,
            total_ms=self.elapsed_ms(),
            usage=self.reader.usage,
            error=error,
            chunks=self.chunks,
            finish_reason=self.reader.finish_reason,
            aborted=self.aborted,
        )
