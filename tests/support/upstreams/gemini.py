"""A scripted Gemini upstream (`POST /v1beta/models/{model}:generateContent` and
`:streamGenerateContent?alt=sse`), and its replies: text in pieces, each call whole
in its own chunk, the last chunk with `finishReason` and `usageMetadata`."""

from __future__ import annotations

import json
from typing import Any

from tests.support.chat_server import ChatServer, Reply, pieces_of, stream_reply

MODEL = "gemini-test"


class GeminiServer(ChatServer):
    def accepts(self, path: str) -> bool:
        return path.split("?")[0].endswith(("Content", ":countTokens"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def function_call(name: str, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        call["id"] = call_id
    return {"functionCall": call}


def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL}
    if finish is not None:
        candidate["finishReason"] = finish
        out["usageMetadata"] = {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "totalTokenCount": 15,
        }
    return out


def gemini_chunks(parts: list[dict[str, Any]], pieces: int = 3) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if "text" in part:
            out += [chunk([{"text": p}]) for p in pieces_of(part["text"], pieces)]
        else:
            out.append(chunk([part]))
    out.append(chunk([], finish="STOP"))
    return out


def gemini_stream(parts: list[dict[str, Any]], *, cuts: int | None = None) -> Reply:
    raw = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in gemini_chunks(parts)]
    return stream_reply(raw, done=False, cuts=cuts)


def gemini_whole(parts: list[dict[str, Any]]) -> Reply:
    return Reply.json(chunk(parts, finish="STOP"))
