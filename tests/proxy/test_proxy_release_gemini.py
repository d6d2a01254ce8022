"""The Gemini format: any subset of several parallel calls denied, edited, answered by
hand or held, streamed or whole; the client's view (every chunk's parts, in order, as
Gemini clients gather them) has exactly the allowed calls with the edited args (see
the chat property test for what each call's name means)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.proxy.helpers import UPSTREAM_KEY, running_proxy
from tests.proxy.test_proxy_release_property import AFTER, KINDS, edited, watch_and_decide
from tests.support.upstreams.gemini import GeminiServer, function_call, gemini_stream, gemini_whole
from workbench.sse import SSESplitter


async def client_view(url: str, names: list[str], streamed: bool) -> list[dict[str, Any]]:
    verb = "streamGenerateContent?alt=sse" if streamed else "generateContent"
    body = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": n} for n in names]}],
    }
    async with httpx2.AsyncClient(timeout=20) as http:
        response = await http.post(
            f"{url}/v1beta/models/gemini-test:{verb}",
            json=body,
            headers={"x-goog-api-key": "agent"},
        )
    assert response.status_code == 200, response.text
    if not streamed:
        chunks = [response.json()]
    else:
        splitter = SSESplitter()
        events = splitter.feed(response.content) + splitter.rest()
        chunks = [json.loads(e.data) for e in events if e.data]
    return [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]


async def one_case(tmp_path: Path, kinds: list[str], streamed: bool, text: str, ids: bool) -> None:
    calls = [(f"{k}_{i}", {"n": i, "s": "é" * i}) for i, k in enumerate(kinds)]
    parts = ([{"text": text}] if text else []) + [
        function_call(n, a, f"id_{n}" if ids else None) for n, a in calls
    ]
    with GeminiServer() as server:
        after = [{"text": AFTER}]
        server.script(
            gemini_stream(parts) if streamed else gemini_whole(parts),
            gemini_stream(after) if streamed else gemini_whole(after),
        )
        async with running_proxy(
            server,
            tmp_path,
            deny=["deny_*"],
            breakpoints=["hold_*", "edit_*", "hand_*"],
            record=False,
        ) as proxy:
            proxy.on_conversation.append(watch_and_decide)
            got = await asyncio.wait_for(
                client_view(proxy.url.removesuffix("/v1"), [n for n, _ in calls], streamed), 20
            )
            model = proxy.conversations[0].agent.state.model.id
        sent = server.requests[0]
        assert (
            sent.headers["x-goog-api-key"] == UPSTREAM_KEY and "authorization" not in sent.headers
        )
    assert model == "gemini-test"
    expected = [
        (n, edited(a) if n.startswith("edit_") else a)
        for n, a in calls
        if n.split("_")[0] in ("pass", "hold", "edit")
    ]
    assert [
        (p["functionCall"]["name"], p["functionCall"]["args"]) for p in got if "functionCall" in p
    ] == expected
    text_got = "".join(p.get("text", "") for p in got)
    if not expected:  # the proxy answered every call upstream: the reply goes on
        assert text_got == (text + "\n\n" if text else "") + AFTER
        answers = server.requests[1].json["contents"][-1]["parts"]
        assert [a["functionResponse"]["name"] for a in answers] == [n for n, _ in calls]
    else:
        assert len(server.requests) == 1
        assert text_got == text


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
    streamed=st.booleans(),
    text=st.sampled_from(["", "Let me look."]),
    ids=st.booleans(),
)
def test_any_subset_of_parallel_calls_reaches_a_gemini_client_as_decided(
    tmp_path: Path, kinds: list[str], streamed: bool, text: str, ids: bool
) -> None:
    with contextlib.suppress(FileExistsError):
        (tmp_path / "sessions").mkdir()
    asyncio.run(one_case(tmp_path, kinds, streamed, text, ids))
