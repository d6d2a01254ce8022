"""OpenAI Responses (`POST /v1/responses`) on the wire: the request as the core's
messages, the response read into stream events, and the response as released.

A request's `input` items become chat-like messages: `message` items by role, the
assistant's output items (its messages and the calls the client runs) one assistant
message, and each call's output a `tool` message. Items the upstream runs itself
(`web_search_call`, `reasoning`, ...) are passed as they are.

Calls the client runs are judged, whatever their kind: `function_call` (arguments
JSON), `custom_tool_call` (free text, judged as `{"input": TEXT}`), and the shell,
patch and computer calls (judged by their payload). A call appears in several
events (added, argument pieces, done, and the final `response.completed`); the
reader checks they agree, and a stream whose call changes between them is cut: the
client must not run something other than what was judged.

Release: a removed call's events are dropped (the SDKs take gaps in `output_index`);
an edited call's pieces become one piece with the edited arguments, and its done
events and the final response carry them; a response left with no call gets a
message item saying why.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from workbench.agent import AssistantMessage
from workbench.providers.stream_builder import StreamBuilder
from workbench.proxy.formats.base import (
    SentCall,
    Splice,
    StreamRelease,
    Tool,
    WireEvent,
    WireFormat,
)
from workbench.proxy.formats.repair import AT, restore_responses
from workbench.proxy.formats.responses_reader import (
    CALL_EVENTS,
    CALL_TYPES,
    END_EVENTS,
    OUTPUT_TYPES,
    ResponsesReader,
    call_arguments,
    call_name,
    is_call,
    with_arguments,
)
from workbench.proxy.wire import JsonDict, RemovedCall, Repair, Verdict, content_text
from workbench.sse import SSEEvent, sse_event


class ResponsesFormat(WireFormat):
    name = "responses"
    title = "Responses"

    def is_request(self, body: Any) -> bool:
        return isinstance(body, dict) and isinstance(body.get("input"), (str, list))

    def messages(self, body: JsonDict) -> list[JsonDict]:
        items = body.get("input")
        if isinstance(items, str):
            return [{"role": "user", "content": items}]
        out: list[JsonDict] = []

        def assistant() -> JsonDict:
            if not out or out[-1].get("role") != "assistant":
                out.append({"role": "assistant", "content": "", "tool_calls": []})
            return out[-1]

        for at, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict):
                continue
            kind = item.get("type") or ("message" if "role" in item else None)
            if kind == "message":
                text = content_text(item.get("content"))
                if item.get("role") == "assistant":
                    reply = assistant()
                    reply["content"] += text
                    reply[AT] = at
                else:
                    out.append({"role": item.get("role"), "content": text})
            elif kind in CALL_TYPES:
                assistant()[AT] = at
                assistant()["tool_calls"].append(
                    {
                        "id": item.get("call_id"),
                        "type": "function",
                        "function": {"name": call_name(item), "arguments": call_arguments(item)},
                    }
                )
            elif kind in OUTPUT_TYPES:
                output = item.get("output")
                text = output if isinstance(output, str) else content_text(output)
                if not isinstance(output, (str, list)):
                    text = json.dumps(output, ensure_ascii=False)
                out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": text})
        return out

    def tools(self, body: JsonDict) -> list[Tool]:
        return _tools(body.get("tools"))

    def system(self, body: JsonDict) -> str:
        parts = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
        parts += [
            m["content"]
            for m in self.messages(body)
            if m.get("role") in ("system", "developer") and m.get("content")
        ]
        return "\n\n".join(parts)

    def read_event(self, event: SSEEvent) -> WireEvent:
        if event.data is not None and event.data.strip() == "[DONE]":
            return WireEvent(event, None, event.raw, done=True)
        chunk = event.json()
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        kind = kind or event.name
        calls = kind in CALL_EVENTS or kind in END_EVENTS
        if kind in ("response.output_item.added", "response.output_item.done"):
            calls = is_call(chunk.get("item"))
        return WireEvent(event, chunk, event.raw, done=kind in END_EVENTS, calls=calls)

    def reader(self, builder: StreamBuilder, body: JsonDict) -> ResponsesReader:
        return ResponsesReader(builder)

    def release_stream(
        self, held: Sequence[WireEvent], verdict: Verdict, sent: dict[str, SentCall]
    ) -> StreamRelease:
        kept = {c.id: c for c in verdict.kept}
        removed = {c.id for c in verdict.removed}
        for streamed in sent:
            if streamed in removed or streamed not in kept or not kept[streamed].untouched:
                return StreamRelease(refused=f"{streamed} was streamed, then denied or edited")
        ids: dict[int, str | None] = {s.wire_index: i for i, s in sent.items()}
        for item in held:
            added = item.chunk if isinstance(item.chunk, dict) else {}
            if added.get("type") == "response.output_item.added" and is_call(added.get("item")):
                ids[added.get("output_index")] = added["item"].get("call_id")  # type: ignore[index]
        out: list[bytes] = []
        top = max((i for i in ids if isinstance(i, int)), default=-1)
        for item in held:
            chunk = item.chunk
            if not isinstance(chunk, dict):
                out.append(item.raw)
                continue
            kind = chunk.get("type")
            index = chunk.get("output_index")
            top = max(top, index) if isinstance(index, int) else top
            call_id = ids.get(index) if isinstance(index, int) else None
            call = kept.get(call_id or "")
            if kind in END_EVENTS and verdict.continued:
                response = chunk.get("response")
                response = response if isinstance(response, dict) else {}
                output = _released_output(response, verdict, top)
                splice = Splice(top + 1, output, response.get("id"))
                return StreamRelease(out, splice=splice, visible=len(output))
            if kind in END_EVENTS:
                if not verdict.kept and verdict.removed:
                    out += _notice_events(chunk, top + 1, verdict.notice)
                response = chunk.get("response")
                if isinstance(response, dict):
                    output = _released_output(response, verdict, top)
                    if not verdict.kept and verdict.removed:
                        output.append(_notice_item(verdict.notice, response))
                    chunk = {**chunk, "response": {**response, "output": output}}
                out.append(sse_event(chunk, item.event.name))
            elif call_id in removed:
                continue
            elif call is None or call.untouched:
                out.append(item.raw)
            elif kind in (
                "response.function_call_arguments.delta",
                "response.custom_tool_call_input.delta",
            ):
                continue  # the edited arguments go in one piece, with the done event
            elif kind in (
                "response.function_call_arguments.done",
                "response.custom_tool_call_input.done",
            ):
                custom = kind.startswith("response.custom")
                text = str(call.arguments.get("input", "")) if custom else call.wire_arguments
                piece = {k: v for k, v in chunk.items() if k not in ("arguments", "input", "name")}
                piece["type"] = kind.replace(".done", ".delta")
                out.append(sse_event({**piece, "delta": text}, item.event.name))
                out.append(sse_event({**chunk, "input" if custom else "arguments": text}))
            elif kind in ("response.output_item.added", "response.output_item.done"):
                item_in = chunk["item"]
                if kind.endswith("added") and item_in.get("type") == "function_call":
                    item_out = {**item_in, "arguments": ""}
                elif kind.endswith("added") and item_in.get("type") == "custom_tool_call":
                    item_out = {**item_in, "input": ""}
                else:
                    item_out = with_arguments(item_in, call)
                out.append(sse_event({**chunk, "item": item_out}, item.event.name))
            else:
                out.append(item.raw)
        return StreamRelease(out)

    def restore_removed(
        self, body: JsonDict, repairs: Sequence[Repair], messages: Sequence[JsonDict] = ()
    ) -> tuple[JsonDict, list[str]]:
        return restore_responses(body, messages, repairs)

    @property
    def repairs(self) -> bool:
        return True

    LIST_KEY = "input"
    splices = True

    def hidden_entries(
        self,
        message: AssistantMessage,
        removed: Sequence[RemovedCall],
        body: JsonDict | None,
        held: Sequence[WireEvent] | None,
    ) -> list[JsonDict] | None:
        response = body
        for item in held or ():
            chunk = item.chunk if isinstance(item.chunk, dict) else {}
            if chunk.get("type") in END_EVENTS and isinstance(chunk.get("response"), dict):
                response = chunk["response"]
        output = response.get("output") if isinstance(response, dict) else None
        if not isinstance(output, list):
            return None
        kinds = {i.get("call_id"): i.get("type") for i in output if is_call(i)}
        answers = []
        for call in removed:
            kind = kinds.get(call.id)
            if kind not in ("function_call", "custom_tool_call"):
                return None  # a shell or computer call's output is not a text
            answers.append({"type": f"{kind}_output", "call_id": call.id, "output": call.result})
        return [*output, *answers]

    def continues_from(self, body: JsonDict) -> str | None:
        previous = body.get("previous_response_id")
        return previous if isinstance(previous, str) and previous else None

    def by_id(
        self, body: JsonDict, upstream_id: str, answers: Sequence[JsonDict]
    ) -> tuple[JsonDict, list[str]]:
        notes = []
        out = body
        if upstream_id != body.get("previous_response_id"):
            out = {**out, "previous_response_id": upstream_id}
            notes.append(
                f"previous_response_id {body.get('previous_response_id')} is {upstream_id} "
                "upstream: the reply went on there after the proxy answered its denied calls"
            )
        if answers:
            items = out.get("input")
            items = [{"role": "user", "content": items}] if isinstance(items, str) else items
            added = [
                {
                    "type": "function_call_output",
                    "call_id": a["tool_call_id"],
                    "output": a["content"],
                }
                for a in answers
            ]
            out = {**out, "input": [*added, *(items if isinstance(items, list) else ())]}
            names = ", ".join(a["tool_call_id"] for a in answers)
            notes.append(f"the calls the agent never received ({names}) answered first")
        return out, notes

    def follow_up(self, body: JsonDict, entries: list[JsonDict]) -> JsonDict:
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        return {**body, "input": [*(items if isinstance(items, list) else ()), *entries]}

    def splice_event(self, chunk: JsonDict, splice: Splice) -> JsonDict | None:
        kind = chunk.get("type")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            return None  # the agent's SDK has its response already
        index = chunk.get("output_index")
        if isinstance(index, int):
            return {**chunk, "output_index": index + splice.offset}
        response = chunk.get("response")
        if kind in END_EVENTS and isinstance(response, dict):
            return {**chunk, "response": self.join_whole(_first_of(splice), response)}
        return chunk

    def join_whole(self, first: JsonDict, body: JsonDict) -> JsonDict:
        output = body.get("output")
        earlier = first.get("output")
        return {
            **body,
            "id": first.get("id") or body.get("id"),
            "output": [
                *(earlier if isinstance(earlier, list) else ()),
                *(output if isinstance(output, list) else ()),
            ],
        }

    def pieces(self, body: JsonDict) -> int:
        output = body.get("output")
        return len(output) if isinstance(output, list) else 0

    def release_whole(self, body: JsonDict, verdict: Verdict) -> JsonDict:
        out = copy.deepcopy(body)
        output = out.get("output")
        output = output if isinstance(output, list) else []
        out["output"] = _released_output(out, verdict, len(output))
        if not verdict.kept and verdict.removed and not verdict.continued:
            out["output"].append(_notice_item(verdict.notice, out))
        return out


def _tools(tools: Any, namespace: str = "") -> list[Tool]:
    """The functions and custom tools a request declares, those in a `namespace` tool too
    (a call names the function by its own name, with the namespace beside it). Tools the
    upstream runs itself (`web_search`, ...) are forwarded as they are."""
    out = []
    within = f"(in namespace {namespace}) " if namespace else ""
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        description = within + str(tool.get("description") or "")
        if tool.get("type") == "function":
            schema = tool.get("parameters")
            out.append(
                Tool(tool["name"], description, schema if isinstance(schema, dict) else None)
            )
        elif tool.get("type") == "custom":
            schema = {"type": "object", "properties": {"input": {"type": "string"}}}
            out.append(Tool(tool["name"], description, schema))
        elif tool.get("type") == "namespace":
            out += _tools(tool.get("tools"), tool["name"])
    return out


def _first_of(splice: Splice) -> JsonDict:
    return {"id": splice.response_id, "output": splice.output}


def _released_output(response: JsonDict, verdict: Verdict, _top: int) -> list[Any]:
    kept = {c.id: c for c in verdict.kept}
    removed = {c.id for c in verdict.removed}
    output = response.get("output")
    out = []
    for item in output if isinstance(output, list) else ():
        if is_call(item):
            call_id = item.get("call_id")
            if call_id in removed or call_id not in kept:
                continue
            if not kept[call_id].untouched:
                item = with_arguments(item, kept[call_id])
        out.append(item)
    return out


def _notice_item(text: str, response: JsonDict) -> JsonDict:
    return {
        "type": "message",
        "id": f"msg_workbench_{response.get('id', '')}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text.lstrip("\n"), "annotations": []}],
    }


def _notice_events(end: JsonDict, index: int, text: str) -> list[bytes]:
    """A message item saying why no call came, streamed as the SDKs expect one."""
    response = end.get("response") if isinstance(end.get("response"), dict) else {}
    item = _notice_item(text, response)  # type: ignore[arg-type]
    part = item["content"][0]
    base = {"output_index": index, "item_id": item["id"], "content_index": 0}
    empty = {**item, "status": "in_progress", "content": []}
    events = [
        {"type": "response.output_item.added", "output_index": index, "item": empty},
        {**base, "type": "response.content_part.added", "part": {**part, "text": ""}},
        {**base, "type": "response.output_text.delta", "delta": part["text"], "logprobs": []},
        {**base, "type": "response.output_text.done", "text": part["text"], "logprobs": []},
        {**base, "type": "response.content_part.done", "part": part},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]
    number = end.get("sequence_number")
    for e in events:
        e["sequence_number"] = number if isinstance(number, int) else 0
    return [sse_event(e, e["type"]) for e in events]


RESPONSES = ResponsesFormat()
