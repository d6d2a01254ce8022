"""A scripted Gemini API server on 127.0.0.1, for Gemini CLI's ACP mode in the tests.

`ScriptedGemini(turns)` answers `POST /v1beta/models/{model}:streamGenerateContent`
(SSE) and `:generateContent` (whole): each request that offers tools (the agent's own
loop) gets the next scripted turn; any other request (a next-speaker check, a title)
gets a short text; `:countTokens` a count. A turn is a list of blocks: `{"text": ...}`,
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

USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}


class ScriptedGemini(ScriptedServer):
    PATH = ""

    def _chunks(self, blocks: list[Block], model: str) -> Iterator[dict[str, Any]]:
        for block in blocks:
            if block.get("wait"):
                self._release.wait(30)
                continue
            if "tool" in block:
                part: dict[str, Any] = {
                    "functionCall": {"name": block["tool"], "args": block["input"]}
                }
            else:
                part = {"text": block["text"]}
            yield _chunk([part], model)
        yield _chunk([], model, finish=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name (a models list)
                self._json({"models": []})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                model = path.rsplit("/", 1)[-1].split(":")[0]
                if path.endswith(":countTokens"):
                    self._json({"totalTokens": 10})
                    return
                blocks = scripted._next(body)
                if path.endswith(":streamGenerateContent"):
                    self._stream(blocks, model)
                    return
                parts: list[dict[str, Any]] = []
                for chunk in scripted._chunks(blocks, model):
                    parts += chunk["candidates"][0]["content"]["parts"]
                self._json(_chunk(parts, model, finish=True))

            def _json(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, blocks: list[Block], model: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for chunk in scripted._chunks(blocks, model):
                        self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


def _chunk(parts: list[dict[str, Any]], model: str, *, finish: bool = False) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if finish:
        candidate["finishReason"] = "STOP"
        out["usageMetadata"] = USAGE
    return out
