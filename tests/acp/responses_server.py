"""A scripted OpenAI Responses server on 127.0.0.1 (`POST /v1/responses`, streamed), for
Codex's ACP adapter in the tests.

Each request that offers tools gets the next scripted turn; other requests (a title,
a summary) get a short text. A turn is a list of blocks: `{"text": ...}` or
`{"tool": NAME, "input": {...}}` (a function call), or `{"wait": True}` (held until
`release()`). Every request body is kept in `requests`.

The server itself (script, requests, holds) is `tests.acp.scripted_server`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.acp.scripted_server import Block, ScriptedServer


class ScriptedResponses(ScriptedServer):
    PATH = "/v1"

    def _events(self, blocks: list[Block]) -> Iterator[dict[str, Any]]:
        response_id = f"resp_{next(self._ids)}"
        yield {"type": "response.created", "response": {"id": response_id}}
        for index, block in enumerate(blocks):
            if block.get("wait"):
                self._release.wait(30)
                continue
            if "tool" in block:
                item = {
                    "type": "function_call",
                    "id": f"fc_{next(self._ids)}",
                    "call_id": block.get("id") or f"call_{next(self._ids)}",
                    "name": block["tool"],
                    "arguments": json.dumps(block["input"]),
                }
                yield {"type": "response.output_item.added", "output_index": index, "item": item}
            else:
                item_id = f"msg_{next(self._ids)}"
                empty = {"type": "message", "role": "assistant", "id": item_id, "content": []}
                yield {"type": "response.output_item.added", "output_index": index, "item": empty}
                yield {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "content_index": 0,
                    "delta": block["text"],
                }
                item = {
                    **empty,
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                }
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        usage = {
            "input_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 17,
        }
        yield {"type": "response.completed", "response": {"id": response_id, "usage": usage}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name (models list)
                raw = json.dumps({"object": "list", "data": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                blocks = scripted._next(body)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for event in scripted._events(blocks):
                        line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                        self.wfile.write(line.encode())
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler
