"""The request as forwarded in the Responses and Anthropic formats: each call the agent
never received put back for the model, with its answer (the denial), as in chat
completions (`workbench.proxy.wire.restore_removed`).

The core keeps a conversation in chat-like messages; each format's `messages` notes
where in the native body each one came from (`"_at"`), so a repair found on the
core's messages is made in the native body. A repair applies only where the agent
repeats the reply it received (its key matches).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from workbench.proxy.wire import JsonDict, Repair, hidden_note, message_key

AT = "_at"
"""The native index a core message came from (its last item, for Responses)."""


def _found(
    messages: Sequence[JsonDict], repairs: Sequence[Repair]
) -> list[tuple[int, Repair, list[tuple[JsonDict, JsonDict]]]]:
    """(native index, repair, [(removed call, its answer)]) for each repair that applies,
    last first, so inserting keeps the earlier indices right."""
    out = []
    for repair in repairs:
        at = repair.position
        if at >= len(messages) or message_key(messages[at]) != repair.released_key:
            continue
        answers = {r["tool_call_id"]: r for r in repair.results}
        removed = [(c, answers[c["id"]]) for c in repair.calls if c.get("id") in answers]
        native = messages[at].get(AT)
        if (removed or repair.hidden) and isinstance(native, int):
            out.append((native, repair, removed))
    return sorted(out, key=lambda found: found[0], reverse=True)


def _note(native: int, removed: list[tuple[JsonDict, JsonDict]]) -> str:
    names = ", ".join(c["id"] for c, _ in removed)
    return (
        f"item {native}: the calls the agent never received ({names}) put back with their answers"
    )


def restore_responses(
    body: JsonDict, messages: Sequence[JsonDict], repairs: Sequence[Repair]
) -> tuple[JsonDict, list[str]]:
    items = body.get("input")
    found = _found(messages, repairs)
    if not found or not isinstance(items, list):
        return body, []
    items = list(items)
    notes: list[str] = []
    for native, repair, removed in found:
        added: list[JsonDict] = []
        for call, answer in removed:
            function = call.get("function") or {}
            added.append(
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": function.get("name"),
                    "arguments": function.get("arguments") or "",
                }
            )
            added.append(
                {"type": "function_call_output", "call_id": call["id"], "output": answer["content"]}
            )
        items[native + 1 : native + 1] = added
        if removed:
            notes.append(_note(native, removed))
        if repair.hidden:
            start = native
            while start > 0 and _in_reply(items[start - 1]):
                start -= 1
            given = sum(t.visible for t in repair.hidden)
            drop = given if native + 1 - start >= given else 0
            items[start : start + drop] = [e for t in repair.hidden for e in t.entries]
            notes.append(hidden_note(native, repair.hidden))
    return {**body, "input": items}, notes


def _in_reply(item: object) -> bool:
    """Whether an input item is part of a model's reply (not a turn of the client's)."""
    from workbench.proxy.formats.responses_reader import OUTPUT_TYPES

    if not isinstance(item, dict):
        return False
    kind = item.get("type") or ("message" if "role" in item else None)
    if kind == "message":
        return item.get("role") == "assistant"
    return kind not in OUTPUT_TYPES and kind != "item_reference"


def restore_anthropic(
    body: JsonDict, messages: Sequence[JsonDict], repairs: Sequence[Repair]
) -> tuple[JsonDict, list[str]]:
    native_messages = body.get("messages")
    found = _found(messages, repairs)
    if not found or not isinstance(native_messages, list):
        return body, []
    native_messages = copy.deepcopy(native_messages)
    notes: list[str] = []
    for native, repair, removed in found:
        if removed:
            _answer_anthropic(native_messages, native, removed, notes)
        if repair.hidden:
            reply = native_messages[native]
            blocks = _blocks(reply.get("content"))
            given = sum(t.visible for t in repair.hidden)
            if len(blocks) >= given:
                reply["content"] = blocks[given:]
            native_messages[native:native] = [e for t in repair.hidden for e in t.entries]
            notes.append(hidden_note(native, repair.hidden))
    return {**body, "messages": native_messages}, notes


def _blocks(content: object) -> list[JsonDict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _answer_anthropic(
    native_messages: list[JsonDict],
    native: int,
    removed: list[tuple[JsonDict, JsonDict]],
    notes: list[str],
) -> None:
    after = native + 1
    if after >= len(native_messages) or native_messages[after].get("role") != "user":
        return  # no turn after the reply to carry the answers
    reply = native_messages[native]
    blocks = _blocks(reply.get("content"))
    for call, _answer in removed:
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": function.get("name"),
                "input": _input(function.get("arguments")),
            }
        )
    reply["content"] = blocks
    turn = native_messages[after]
    theirs = _blocks(turn.get("content"))
    results = [
        {
            "type": "tool_result",
            "tool_use_id": c["id"],
            "content": a["content"],
            "is_error": True,
        }
        for c, a in removed
    ]
    turn["content"] = results + theirs
    notes.append(_note(native, removed))


def _input(arguments: object) -> object:
    from workbench.json_text import loads

    try:
        value = loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def restore_gemini(
    body: JsonDict, messages: Sequence[JsonDict], repairs: Sequence[Repair]
) -> tuple[JsonDict, list[str]]:
    contents = body.get("contents")
    found = _found(messages, repairs)
    if not found or not isinstance(contents, list):
        return body, []
    contents = copy.deepcopy(contents)
    notes: list[str] = []
    for native, repair, removed in found:
        if removed:
            _answer_gemini(contents, native, removed, notes)
        if repair.hidden:
            parts = list(contents[native].get("parts", []))
            head = "".join(t.text for t in repair.hidden)
            while head and parts and isinstance(parts[0].get("text"), str):
                text = parts[0]["text"]
                if head.startswith(text):
                    head = head[len(text) :]
                    parts.pop(0)
                elif text.startswith(head):
                    parts[0] = {**parts[0], "text": text[len(head) :]}
                    head = ""
                else:
                    break
            if not head:
                contents[native]["parts"] = parts
            contents[native:native] = [e for t in repair.hidden for e in t.entries]
            notes.append(hidden_note(native, repair.hidden))
    return {**body, "contents": contents}, notes


def _answer_gemini(
    contents: list[JsonDict],
    native: int,
    removed: list[tuple[JsonDict, JsonDict]],
    notes: list[str],
) -> None:
    after = native + 1
    if after >= len(contents) or contents[after].get("role") == "model":
        return  # no turn after the reply to carry the answers
    calls, answers = [], []
    for call, answer in removed:
        function = call.get("function") or {}
        named = {"name": function.get("name")}
        if "#" not in call["id"]:  # the model's own id (the proxy's are NAME#TURN.K)
            named["id"] = call["id"]
        calls.append({"functionCall": {**named, "args": _input(function.get("arguments"))}})
        answers.append({"functionResponse": {**named, "response": {"error": answer["content"]}}})
    contents[native]["parts"] = [*contents[native].get("parts", []), *calls]
    parts = list(contents[after].get("parts", []))
    last = max((i for i, p in enumerate(parts) if "functionResponse" in p), default=-1)
    contents[after]["parts"] = parts[: last + 1] + answers + parts[last + 1 :]
    notes.append(_note(native, removed))
