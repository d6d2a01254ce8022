"""The Responses format: any subset of several parallel calls denied, edited, answered by
hand or held, streamed or whole; the `openai` SDK's own Responses accumulator builds
exactly the allowed calls, each once, with the edited arguments (see the chat
property test for what each call's name means)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import openai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.proxy.helpers import AGENT_KEY, running_proxy
from tests.proxy.test_proxy_release_property import AFTER, KINDS, edited, watch_and_decide
from tests.support.upstreams.responses import (
    ResponsesServer,
    function_call,
    message,
    responses_stream,
    responses_whole,
)
from workbench.proxy.listen import tls_context


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "parameters": {"type": "object", "properties": {}}}


async def client_view(url: str, names: list[str], streamed: bool) -> tuple[str, list[Any]]:
    client = openai.AsyncOpenAI(
        base_url=url,
        api_key=AGENT_KEY,
        max_retries=0,
        http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
    )
    tools: Any = [tool(n) for n in names]
    try:
        if streamed:
            async with client.responses.stream(model="test-model", input="go", tools=tools) as s:
                async for _ in s:
                    pass
                done = await s.get_final_response()
        else:
            done = await client.responses.create(model="test-model", input="go", tools=tools)
    finally:
        await client.close()
    calls = [item for item in done.output if item.type == "function_call"]
    return done.output_text, calls


async def one_case(tmp_path: Path, kinds: list[str], streamed: bool, text: str, cut: int) -> None:
    calls = [(f"call_{i}", f"{k}_{i}", {"n": i, "s": "é" * i}) for i, k in enumerate(kinds)]
    output = ([message(text)] if text else []) + [
        function_call(i, n, json.dumps(a)) for i, n, a in calls
    ]
    with ResponsesServer() as server:
        after = [message(AFTER, "msg_after")]
        server.script(
            responses_stream(output, cuts=cut or None) if streamed else responses_whole(output),
            responses_stream(after) if streamed else responses_whole(after),
        )
        async with running_proxy(
            server,
            tmp_path,
            deny=["deny_*"],
            breakpoints=["hold_*", "edit_*", "hand_*"],
            record=False,
        ) as proxy:
            proxy.on_conversation.append(watch_and_decide)
            content, got = await asyncio.wait_for(
                client_view(proxy.url, [n for _, n, _ in calls], streamed), 20
            )
    expected = [
        (i, n, edited(a) if n.startswith("edit_") else a)
        for i, n, a in calls
        if n.split("_")[0] in ("pass", "hold", "edit")
    ]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in got] == expected
    if not expected:  # the proxy answered every call upstream: the reply goes on
        assert content == text + AFTER  # output_text joins the message items
        follow_up = server.requests[1].json["input"]
        answers = [i["call_id"] for i in follow_up if i.get("type") == "function_call_output"]
        assert answers == [i for i, _, _ in calls]
    else:
        assert content == text
        assert len(server.requests) == 1


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
    streamed=st.booleans(),
    text=st.sampled_from(["", "Let me look."]),
    cut=st.sampled_from([0, 1, 13, 64]),
)
def test_any_subset_of_parallel_calls_reaches_a_responses_client_as_decided(
    tmp_path: Path, kinds: list[str], streamed: bool, text: str, cut: int
) -> None:
    with contextlib.suppress(FileExistsError):
        (tmp_path / "sessions").mkdir()
    asyncio.run(one_case(tmp_path, kinds, streamed, text, cut))
