"""Only this machine's programs use the proxy's key; nothing passes unjudged unless asked."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from tests.proxy.helpers import AGENT_KEY, UPSTREAM_KEY, running_proxy, text_reply
from workbench.proxy.guard import normal_path, recorded_headers
from workbench.proxy.server import UNJUDGED_LOG
from workbench.proxy.wire import HOP_HEADERS

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


async def post(proxy, path="/chat/completions", **kwargs):
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(proxy.url + path, **kwargs)


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"origin": "https://evil.example"}, 403),
        ({"origin": "null"}, 403),
        ({"host": "evil.example:8765"}, 421),  # DNS rebinding: the page's own name
        ({"host": "127.0.0.1"}, 421),  # no port: not this proxy's
        ({"content-type": "text/plain"}, 415),  # a browser's "simple request"
        ({"content-type": "application/x-www-form-urlencoded"}, 415),
    ],
)
async def test_a_request_a_web_page_could_send_is_refused(chat_server, tmp_path, headers, status):
    async with running_proxy(chat_server, tmp_path) as proxy:
        response = await post(
            proxy,
            content=json.dumps(CHAT).encode(),
            headers={"content-type": "application/json", **headers},
        )
    assert response.status_code == status
    assert "workbench proxy" in response.json()["error"]["message"]
    assert "access-control-allow-origin" not in response.headers
    assert chat_server.requests == [] and proxy.conversations == []


async def test_localhost_by_name_is_this_machine(chat_server, tmp_path):
    chat_server.script(text_reply("hello", streamed=False))
    async with running_proxy(chat_server, tmp_path) as proxy:
        url = proxy.url.replace("127.0.0.1", "localhost")
        client = openai.AsyncOpenAI(base_url=url, api_key=AGENT_KEY, max_retries=0)
        done = await client.chat.completions.create(**CHAT)
        await client.close()
    assert done.choices[0].message.content == "hello"


async def test_with_a_token_only_a_client_sending_it_gets_in(chat_server, tmp_path):
    chat_server.script(text_reply("hello", streamed=False))
    async with running_proxy(chat_server, tmp_path, token="tok-123") as proxy:
        refused = await post(proxy, json=CHAT, headers={"authorization": f"Bearer {AGENT_KEY}"})
        anthropic_style = await post(proxy, json=CHAT, headers={"x-api-key": "tok-123"})
    assert refused.status_code == 401
    assert anthropic_style.status_code == 200
    (sent,) = chat_server.requests
    assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert "x-api-key" not in sent.headers  # the token never goes upstream


async def test_a_body_that_is_not_a_chat_request_is_refused(chat_server, tmp_path):
    async with running_proxy(chat_server, tmp_path) as proxy:
        bad_json = await post(
            proxy, content=b"{not json", headers={"content-type": "application/json"}
        )
        no_messages = await post(proxy, json={"model": "m"})
    assert bad_json.status_code == 400 and no_messages.status_code == 400
    assert chat_server.requests == []


@pytest.mark.parametrize(
    "path",
    [
        "/./chat/completions",
        "/../v1/chat/completions",
        "//chat/completions",
        "/%2e/chat/completions",
    ],
)
async def test_a_dotted_path_is_the_same_path_and_is_judged(chat_server, tmp_path, path):
    chat_server.script(text_reply("hello", streamed=False))
    async with running_proxy(chat_server, tmp_path) as proxy:
        url = proxy.url + path
        async with httpx2.AsyncClient(timeout=10) as http:
            request = http.build_request("POST", url, json=CHAT)
            request.url = request.url.copy_with(raw_path=("/v1" + path).encode())
            response = await http.send(request)
    assert response.status_code == 200
    assert len(proxy.conversations) == 1  # judged, as a conversation
    assert chat_server.requests[0].path == "/v1/chat/completions"


async def test_an_unknown_path_is_refused_unless_passed_through_and_then_noted(
    chat_server, tmp_path
):
    async with running_proxy(chat_server, tmp_path) as proxy:
        refused = await post(proxy, "/embeddings", json={"input": "x"})
    assert refused.status_code == 404 and "--pass-through" in refused.json()["error"]["message"]
    assert chat_server.requests == []

    async with running_proxy(chat_server, tmp_path, pass_through=["/v1/embeddings"]) as proxy:
        seen = []
        proxy.on_unjudged.append(seen.append)
        passed = await post(
            proxy, "/embeddings", json={"input": "x"}, headers={"helicone-auth": "Bearer gw-secret"}
        )
    # forwarded: the test server has no such route and says so
    assert passed.json() == {"error": {"message": "no route POST /v1/embeddings"}}
    assert [e["path"] for e in seen] == ["/v1/embeddings"]
    assert chat_server.requests[0].headers["helicone-auth"] == "Bearer gw-secret"  # the gateway's
    log = (tmp_path / "sessions" / UNJUDGED_LOG).read_text()
    assert "/v1/embeddings" in log and "gw-secret" not in log


def test_gateway_keys_are_never_recorded():
    headers = {
        "x-goog-api-key": "g",
        "helicone-auth": "h",
        "x-portkey-api-key": "p",
        "x-some-gateway-token": "t",
        "x-api-key": "a",
        "user-agent": "ua",
        "anthropic-version": "2023-06-01",
    }
    assert recorded_headers(headers.items(), HOP_HEADERS) == {
        "user-agent": "ua",
        "anthropic-version": "2023-06-01",
    }


def test_paths_are_normalised_as_the_upstream_reads_them():
    assert normal_path("/v1/./chat/completions") == "/v1/chat/completions"
    assert normal_path("/v1/%2E/chat//completions") == "/v1/chat/completions"
    assert normal_path("/v1/x/%252e%252e/chat/completions") == "/v1/chat/completions"
    assert normal_path("/../../v1/models") == "/v1/models"
