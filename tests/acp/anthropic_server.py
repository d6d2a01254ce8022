"""A scripted Anthropic Messages server on 127.0.0.1, for real ACP agents in the tests.

`ScriptedAnthropic(turns)` answers `POST /v1/messages`: each request that offers
tools (the agent's own loop) gets the next scripted turn, streamed as the API does
(SSE: message_start, content blocks, message_delta, message_stop) or whole; any
other request (a title, a quota check) gets a short text. A turn is a list of
blocks: `{"text": ...}`, `{"thinking": ...}`, `{"tool": NAME, "input": {...}}`;
a `{"wait": True}` block holds the response open until `release()` (a turn a test
cancels mid-way). Every request body is kept in `requests`.

The server itself (script, requests, holds) is `tests.acp.scripted_server`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.acp.scripted_server import Block, ScriptedServer


class ScriptedAnthropic(ScriptedServer):
    PATH = ""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._json({"input_tokens": 10} if "count_tokens" in self.path else {})
                    return
                blocks = scripted._next(body)
                message_id = f"msg_{next(scripted._ids)}"
                if body.get("stream"):
                    self._stream(message_id, body, blocks)
                else:
                    self._json(_whole(message_id, body, blocks, scripted))

            def _json(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, message_id: str, body: dict[str, Any], blocks: list[Block]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for name, data in _events(message_id, body, blocks, scripted):
                        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


def _tool_id(scripted: ScriptedAnthropic) -> str:
    return f"toolu_{next(scripted._ids):04d}"


def _events(
    message_id: str, body: dict[str, Any], blocks: list[Block], scripted: ScriptedAnthropic
) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 12, "output_tokens": 1}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude"),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
    )
    index = 0
    stop = "end_turn"
    for block in blocks:
        if block.get("wait"):
            scripted._release.wait(30)
            continue
        if "tool" in block:
            stop = "tool_use"
            start = {"type": "tool_use", "id": block.get("id") or _tool_id(scripted),
                     "name": block["tool"], "input": {}}  # fmt: skip
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        elif "thinking" in block:
            start = {"type": "thinking", "thinking": "", "signature": ""}
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": start}  # fmt: skip
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        if "thinking" in block:
            signature = {"type": "signature_delta", "signature": "sig"}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": signature}  # fmt: skip
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _whole(
    message_id: str, body: dict[str, Any], blocks: list[Block], scripted: ScriptedAnthropic
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    stop = "end_turn"
    for block in blocks:
        if "tool" in block:
            stop = "tool_use"
            content.append({"type": "tool_use", "id": block.get("id") or _tool_id(scripted),
                            "name": block["tool"], "input": block["input"]})  # fmt: skip
        elif "text" in block:
            content.append({"type": "text", "text": block["text"]})
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 5},
    }
