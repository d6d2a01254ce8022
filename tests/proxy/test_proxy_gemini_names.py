"""Gemini calls are named by their place, so the name in the upstream's reply and in
the client's next request agree whatever id the client gives a call; an answer is
matched by the id the client repeats, else by its place among answers of its name."""

from __future__ import annotations

from workbench.proxy.formats.gemini import GEMINI


def call(name: str, n: int, call_id: str | None = None) -> dict:
    body: dict = {"name": name, "args": {"n": n}}
    if call_id:
        body["id"] = call_id
    return {"functionCall": body}


def answer(name: str, n: int, call_id: str | None = None) -> dict:
    body: dict = {"name": name, "response": {"n": n}}
    if call_id:
        body["id"] = call_id
    return {"functionResponse": body}


def request(model_parts: list[dict], user_parts: list[dict]) -> dict:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": model_parts},
            {"role": "user", "parts": user_parts},
        ]
    }


def answers(body: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in GEMINI.messages(body) if m["role"] == "tool"}


def calls(body: dict) -> list[str]:
    (reply,) = [m for m in GEMINI.messages(body) if m["role"] == "assistant"]
    return [c["id"] for c in reply["tool_calls"]]


def test_calls_with_a_client_made_id_keep_their_place_name():
    body = request([call("ls", 0, "ls_1796_0"), call("ls", 1, "ls_1796_1")], [])
    assert calls(body) == ["ls#0.0", "ls#0.1"]


def test_answers_in_another_order_are_matched_by_the_id_the_client_repeats():
    body = request(
        [call("ls", 0, "a"), call("ls", 1, "b"), call("cat", 2, "c")],
        [answer("cat", 2, "c"), answer("ls", 1, "b"), answer("ls", 0, "a")],
    )
    assert answers(body) == {"cat#0.0": '{"n": 2}', "ls#0.1": '{"n": 1}', "ls#0.0": '{"n": 0}'}


def test_answers_without_ids_are_matched_by_their_place_among_answers_of_their_name():
    body = request(
        [call("ls", 0), call("cat", 1), call("ls", 2)], [answer("ls", 0), answer("ls", 2)]
    )
    assert answers(body) == {"ls#0.0": '{"n": 0}', "ls#0.1": '{"n": 2}'}
