"""A scripted OpenAI Responses upstream (`POST /v1/responses`), and its replies.

`response_events` streams output items as OpenAI does: `response.created`, then per
item `output_item.added`, its pieces (text, or argument deltas), its done events and
`output_item.done`, then `response.completed` with the whole output.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.chat_server import ChatServer, Reply, pieces_of, stream_reply

MODEL = "test-model"


class ResponsesServer(ChatServer):
    def accepts(self, path: str) -> bool:
        return path.split("?")[0].rstrip("/").endswith("/responses")


def message(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def response(output: list[dict[str, Any]], response_id: str = "resp_1") -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1700000000,
        "model": MODEL,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def response_events(
    output: list[dict[str, Any]], pieces: int = 3, response_id: str = "resp_1"
) -> list[dict[str, Any]]:
    whole = response(output, response_id)
    start = {**whole, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": start}]
    for index, item in enumerate(output):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            base = {"output_index": index, "item_id": item["id"], "content_index": 0}
            part = {"type": "output_text", "text": "", "annotations": []}
            events += [
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                },
                {**base, "type": "response.content_part.added", "part": part},
                *(
                    {**base, "type": "response.output_text.delta", "delta": p, "logprobs": []}
                    for p in pieces_of(text, pieces)
                ),
                {**base, "type": "response.output_text.done", "text": text, "logprobs": []},
                {**base, "type": "response.content_part.done", "part": {**part, "text": text}},
            ]
        else:
            base = {"output_index": index, "item_id": item["id"]}
            events += [
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                },
                *(
                    {**base, "type": "response.function_call_arguments.delta", "delta": p}
                    for p in pieces_of(item["arguments"], pieces)
                ),
                {
                    **base,
                    "type": "response.function_call_arguments.done",
                    "arguments": item["arguments"],
                    "name": item["name"],
                },
            ]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": whole})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def responses_stream(output: list[dict[str, Any]], **kwargs: Any) -> Reply:
    cuts = kwargs.pop("cuts", None)
    events = response_events(output, **kwargs)
    raw = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    return stream_reply(raw, done=False, cuts=cuts)


def responses_whole(output: list[dict[str, Any]], **kwargs: Any) -> Reply:
    return Reply.json(response(output, **kwargs))
