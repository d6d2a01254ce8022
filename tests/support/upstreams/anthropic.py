"""A scripted Anthropic Messages upstream (`POST /v1/messages`), and its replies.

`message_events` streams as Anthropic does: `message_start`, per content block
`content_block_start`, its deltas (`text_delta`, or `input_json_delta` pieces with
the start block's `input` empty) and `content_block_stop`, then `message_delta`
with the stop reason and `message_stop`.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.chat_server import ChatServer, Reply, pieces_of, stream_reply

MODEL = "claude-test"


class AnthropicServer(ChatServer):
    def accepts(self, path: str) -> bool:
        return path.split("?")[0].rstrip("/").endswith("/messages")


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def message(content: list[dict[str, Any]], message_id: str = "msg_1") -> dict[str, Any]:
    calls = any(b["type"] == "tool_use" for b in content)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def message_events(content: list[dict[str, Any]], pieces: int = 3) -> list[dict[str, Any]]:
    whole = message(content)
    start = {
        **whole,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(content):
        if block["type"] == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": text_block("")}
            )
            events += [
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": p},
                }
                for p in pieces_of(block["text"], pieces)
            ]
        else:
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                }
            )
            events += [
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
                for p in pieces_of(json.dumps(block["input"]), pieces)
            ]
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    return events


def anthropic_stream(
    content: list[dict[str, Any]], *, cuts: int | None = None, pieces: int = 3
) -> Reply:
    raw = [
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
        for e in message_events(content, pieces)
    ]
    return stream_reply(raw, done=False, cuts=cuts)


def anthropic_whole(content: list[dict[str, Any]]) -> Reply:
    return Reply.json(message(content))
