"""The Anthropic Messages format: any subset of several parallel calls denied, edited,
answered by hand or held, streamed or whole; the `anthropic` SDK's own stream
accumulator builds exactly the allowed calls, each once, with the edited input (see
the chat property test for what each call's name means)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.proxy.helpers import AGENT_KEY, UPSTREAM_KEY, running_proxy
from tests.proxy.test_proxy_release_property import AFTER, KINDS, edited, watch_and_decide
from tests.support.upstreams.anthropic import (
    AnthropicServer,
    anthropic_stream,
    anthropic_whole,
    text_block,
    tool_use,
)
from workbench.proxy.listen import tls_context


async def client_view(url: str, names: list[str], streamed: bool) -> tuple[str, list[Any], str]:
    import anthropic  # here, not at collection: seconds of import in each worker

    client = anthropic.AsyncAnthropic(
        base_url=url,
        api_key=AGENT_KEY,
        max_retries=0,
        http_client=anthropic.DefaultAsyncHttpxClient(verify=tls_context()),
    )
    tools: Any = [{"name": n, "input_schema": {"type": "object"}} for n in names]
    messages: Any = [{"role": "user", "content": "go"}]
    try:
        if streamed:
            async with client.messages.stream(
                model="claude-test", max_tokens=100, messages=messages, tools=tools
            ) as s:
                async for _ in s:
                    pass
                done = await s.get_final_message()
        else:
            done = await client.messages.create(
                model="claude-test", max_tokens=100, messages=messages, tools=tools
            )
    finally:
        await client.close()
    text = "".join(b.text for b in done.content if b.type == "text")
    return text, [b for b in done.content if b.type == "tool_use"], done.stop_reason or ""


async def one_case(tmp_path: Path, kinds: list[str], streamed: bool, text: str, cut: int) -> None:
    calls = [(f"toolu_{i}", f"{k}_{i}", {"n": i, "s": "é" * i}) for i, k in enumerate(kinds)]
    content = ([text_block(text)] if text else []) + [tool_use(i, n, a) for i, n, a in calls]
    with AnthropicServer() as server:
        after = [text_block(AFTER)]
        server.script(
            anthropic_stream(content, cuts=cut or None) if streamed else anthropic_whole(content),
            anthropic_stream(after) if streamed else anthropic_whole(after),
        )
        async with running_proxy(
            server,
            tmp_path,
            deny=["deny_*"],
            breakpoints=["hold_*", "edit_*", "hand_*"],
            record=False,
        ) as proxy:
            proxy.on_conversation.append(watch_and_decide)
            got_text, got, stop = await asyncio.wait_for(
                client_view(proxy.url.removesuffix("/v1"), [n for _, n, _ in calls], streamed), 20
            )
        assert server.requests[0].headers["x-api-key"] == UPSTREAM_KEY  # its own header style
        assert "authorization" not in server.requests[0].headers
        assert server.requests[0].path == "/v1/messages"
    expected = [
        (i, n, edited(a) if n.startswith("edit_") else a)
        for i, n, a in calls
        if n.split("_")[0] in ("pass", "hold", "edit")
    ]
    assert [(c.id, c.name, c.input) for c in got] == expected
    if not expected:  # the proxy answered every call upstream: the reply goes on
        assert stop == "end_turn" and got_text == text + AFTER
        answers = server.requests[1].json["messages"][-1]["content"]
        assert [(a["tool_use_id"], a["is_error"]) for a in answers] == [
            (i, True) for i, _, _ in calls
        ]
    else:
        assert len(server.requests) == 1
        assert got_text == text and stop == "tool_use"


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
    streamed=st.booleans(),
    text=st.sampled_from(["", "Let me look."]),
    cut=st.sampled_from([0, 1, 13, 64]),
)
def test_any_subset_of_parallel_calls_reaches_an_anthropic_client_as_decided(
    tmp_path: Path, kinds: list[str], streamed: bool, text: str, cut: int
) -> None:
    import anthropic  # noqa: F401  (imported before the timed request of the first example)

    with contextlib.suppress(FileExistsError):
        (tmp_path / "sessions").mkdir()
    asyncio.run(one_case(tmp_path, kinds, streamed, text, cut))
