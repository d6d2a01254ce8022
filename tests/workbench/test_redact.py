"""Redaction finds every piece of a known secret: forwards and reversed, across
whitespace and line breaks, and across the chunks of one output."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.agent import Agent, AgentToolResult, tool
from workbench.agent.types import ToolResultMessage
from workbench.providers.scripted import Scenario, ScriptedProvider
from workbench.redact import PIECE, Redactor, Secret, is_credential_header, known_secrets
from workbench.runtime import RunOptions, build_runtime

KEY = "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4n"
TOKEN_ALPHABET = string.ascii_letters + string.digits + "-_"


def pieces(secret: str) -> list[str]:
    """Every `PIECE` characters of `secret`, forwards and reversed."""
    grams = [secret[at : at + PIECE] for at in range(len(secret) - PIECE + 1)]
    return grams + [g[::-1] for g in grams]


def surviving(text: str, secret: str) -> list[str]:
    compact = "".join(text.split())
    return [g for g in pieces(secret) if g in compact]


@pytest.mark.parametrize(
    "shown",
    [
        KEY,  # whole
        KEY[:16],  # cut -c1-16
        KEY[16:],  # the other half
        KEY[::-1],  # rev
        KEY[5:20][::-1],  # a reversed middle
        "\n".join(KEY[i : i + 4] for i in range(0, len(KEY), 4)),  # fold -w 4
        " ".join(KEY),  # od -c, one character apart
        "\r\n".join(KEY[::-1][i : i + 3] for i in range(0, len(KEY), 3)),  # rev | fold -w 3
        f"OPENAI_API_KEY={KEY}\0PATH=/usr/bin",  # straight out of /proc/PID/environ
    ],
)
def test_each_spelling_of_a_piece_is_redacted(shown: str) -> None:
    redact = Redactor({"OPENAI_API_KEY": KEY})
    out = redact(f"before {shown} after")
    assert out.startswith("before ") and out.endswith(" after")
    assert "[REDACTED:OPENAI_API_KEY]" in out
    assert surviving(out, KEY) == []


def test_ordinary_text_is_left_alone() -> None:
    redact = Redactor({"OPENAI_API_KEY": KEY})
    text = "sk-proj is a prefix; Qw3rTy7 is seven characters of the key"
    assert redact(text) == text
    assert redact("") == ""


@pytest.mark.parametrize(
    "secret", ["/home/someone/.ssh/id_ed25519", Secret("/home/someone/.ssh/id_ed25519", True)]
)
def test_a_path_valued_secret_is_redacted_whole_not_by_pieces(secret: str | Secret) -> None:
    redact = Redactor({"SSH_KEY": secret})
    assert redact("/home/someone/project") == "/home/someone/project"
    assert redact("cat /home/someone/.ssh/id_ed25519") == "cat [REDACTED:SSH_KEY]"


def test_a_setting_that_is_not_a_credential_is_redacted_whole_only() -> None:
    redact = Redactor({"db env STAGE": Secret("production", pieces=False)})
    assert redact("productivity") == "productivity"
    assert redact("stage=production") == "stage=[REDACTED:db env STAGE]"


def test_mcp_env_pieces_follow_the_variables_name() -> None:
    from workbench.mcp.config import McpServerConfig

    server = McpServerConfig(
        name="db", command=("db",), env={"DB_TOKEN": "tok-0123456789", "MODE": "production"}
    )
    secrets = known_secrets(mcp_servers=[server], environ={})
    assert secrets["db env DB_TOKEN"] == Secret("tok-0123456789", True)
    assert secrets["db env MODE"] == Secret("production", False)


@pytest.mark.parametrize(
    "header",
    [
        "Authorization",
        "x-goog-api-key",
        "X-Goog-Api-Key",
        "helicone-auth",
        "Helicone-Auth",
        "x-portkey-api-key",
        "x-amz-security-token",
        "anthropic-api-key",
        "api_key",
        "x-client-secret",
        "x-auth",
        "x-authorization-override",
        "x-db-password",
        "x-db-passwd",
        "x-session-cookie",
        "x-credential",
        "x-credentials",
        "x-amz-signature",
        "x-session",
    ],
)
def test_gateway_credential_headers_are_known(header: str) -> None:
    assert is_credential_header(header)


@pytest.mark.parametrize("header", ["content-type", "x-request-id", "user-agent", "accept"])
def test_other_headers_are_not_credentials(header: str) -> None:
    assert not is_credential_header(header)


def test_a_gateway_headers_pieces_are_redacted() -> None:
    from pydantic import SecretStr

    from workbench.providers.settings import OpenAISettings

    settings = OpenAISettings(
        model="m",
        api_key=SecretStr(KEY),
        extra_headers={"helicone-auth": "Bearer hk-9f8e7d6c5b4a39281706", "x-trace": "run-1234"},
    )
    redact = Redactor(known_secrets(settings, environ={}))
    out = redact("auth hk-9f8e7d6c5b4a tail 6c5b4a39281706 id run-1234")
    assert surviving(out, "hk-9f8e7d6c5b4a39281706") == []
    assert "[REDACTED:header helicone-auth token]" in out
    assert out.endswith("id [REDACTED:header x-trace]")  # whole value, not pieces


# -- chunks ---------------------------------------------------------------------------

secrets_st = st.lists(
    st.text(TOKEN_ALPHABET, min_size=PIECE, max_size=48), min_size=1, max_size=3, unique=True
)
filler_st = st.text(string.ascii_letters + string.digits + " \n\t.,:;=/", max_size=60)


@st.composite
def leaky_output(draw: Any) -> tuple[list[str], list[str]]:
    """Secrets, and an output holding pieces of them (forwards or reversed, with
    whitespace slipped between characters), cut into chunks anywhere."""
    secrets = draw(secrets_st)
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        parts.append(draw(filler_st))
        secret = draw(st.sampled_from(secrets))
        start = draw(st.integers(0, len(secret) - PIECE))
        stop = draw(st.integers(start + PIECE, len(secret)))
        piece = secret[start:stop]
        if draw(st.booleans()):
            piece = piece[::-1]
        gaps = draw(st.lists(st.sampled_from(["", "", "", "\n", " ", "\r\n"]), min_size=len(piece)))
        parts.append("".join(c + g for c, g in zip(piece, gaps, strict=False)))
    parts.append(draw(filler_st))
    text = "".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    return secrets, chunks


@settings(max_examples=300, deadline=None)
@given(leaky_output())
def test_no_piece_survives_in_any_chunking(case: tuple[list[str], list[str]]) -> None:
    secrets, chunks = case
    redactor = Redactor({f"S{n}": s for n, s in enumerate(secrets)})
    stream = redactor.stream()
    shown = "".join(stream(chunk) for chunk in chunks)
    whole = redactor("".join(chunks))
    for secret in secrets:
        assert surviving(shown, secret) == []
        assert surviving(whole, secret) == []


def test_a_stream_redacts_only_the_new_chunk() -> None:
    stream = Redactor({"K": KEY}).stream()
    assert stream("start " + KEY[:5]) == "start " + KEY[:5]  # too short to tell, yet
    assert stream(KEY[5:12] + " end") == "[REDACTED:K] end"


# -- where the tool outputs go ---------------------------------------------------------


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


async def test_updates_that_split_a_key_between_them_show_no_piece() -> None:
    @tool
    async def leak(on_update: Any) -> str:
        """Prints the key in small deltas."""
        for at in range(0, len(KEY), 5):
            on_update(AgentToolResult.text(KEY[at : at + 5]))
        return "done"

    scenario = Scenario.model_validate(
        {
            "name": "s",
            "turns": [{"tool_calls": [{"name": "leak", "arguments": {}}]}, {"text": "ok"}],
        }
    )
    provider = ScriptedProvider(scenario)
    agent = Agent(stream_fn=provider, model=provider.model, tools=[leak])
    agent.redact = Redactor({"K": KEY})
    shown: list[str] = []
    agent.subscribe(
        lambda e, _s: (
            shown.append(e.partial_result.content[0].text)
            if e.type == "tool_execution_update"
            else None
        )
    )
    await agent.prompt("go")
    assert len(shown) == len(range(0, len(KEY), 5))
    assert surviving("".join(shown), KEY) == []


PRINT_LONG_LINE = (
    "python3 -c \"import os; k=os.environ['GH_TOKEN']; print('x'*{before} + {key} + 'y'*30000)\""
)
"""A 40 KB line with the key where run_command cuts long lines (at 10 KB)."""


@pytest.mark.parametrize(
    "command",
    [
        # the line is cut in its middle, right through the key
        PRINT_LONG_LINE.format(before=10230, key="k"),
        PRINT_LONG_LINE.format(before=10225, key="k[::-1]"),
        "printenv GH_TOKEN | rev",
        "printenv GH_TOKEN | cut -c1-16; printenv GH_TOKEN | cut -c17-",
        "printenv GH_TOKEN | fold -w 4",
    ],
)
async def test_a_passed_secret_printed_in_pieces_is_redacted(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = tmp_path / "s.jsonl"
    scenario = Scenario.model_validate(
        {
            "name": "s",
            "turns": [
                {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                {"text": "done"},
            ],
        }
    )
    options = RunOptions(
        scenario=scenario,
        workspace=workspace,
        approve="all",
        pass_env=["GH_TOKEN"],
        session=session,
    )
    import os

    os.environ["GH_TOKEN"] = KEY
    try:
        runtime = build_runtime(options)
        updates: list[str] = []
        runtime.agent.subscribe(
            lambda e, _s: (
                updates.append(e.partial_result.content[0].text)
                if e.type == "tool_execution_update"
                else None
            )
        )
        await runtime.agent.prompt("go")
    finally:
        del os.environ["GH_TOKEN"]
    [message] = results(runtime.agent)
    assert not message.is_error, message.text[:500]
    assert "[REDACTED:GH_TOKEN]" in message.text
    for text in (message.text, session.read_text(), *updates):
        assert surviving(text, KEY) == []


def test_the_shortest_secret_redacted_is_six_characters() -> None:
    redact = Redactor({"SIX": "Zq9!x2", "FIVE": "Wv7#k"})
    assert redact("a Zq9!x2 b Wv7#k c") == "a [REDACTED:SIX] b Wv7#k c"


def test_a_stream_finds_a_secret_across_a_junction_with_more_after_it() -> None:
    stream = Redactor({"K": KEY}).stream()
    assert stream("start " + KEY[:5]) == "start " + KEY[:5]
    assert stream(KEY[5:12] + " end " + KEY) == "[REDACTED:K] end [REDACTED:K]"


def test_a_stream_looks_past_whitespace_at_the_end_of_a_chunk() -> None:
    stream = Redactor({"K": KEY}).stream()
    assert stream("x " + KEY[:6] + " " * 60) == "x " + KEY[:6] + " " * 60
    assert stream(KEY[6:12] + " end") == "[REDACTED:K] end"  # 12 characters across the two


def test_the_credential_header_set_holds_the_gateway_headers() -> None:
    """Code that checks membership (the proxy's records) drops these too."""
    from workbench.redact import CREDENTIAL_HEADERS

    assert CREDENTIAL_HEADERS == {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "openai-api-key",
        "x-goog-api-key",
        "x-portkey-api-key",
        "helicone-auth",
        "cookie",
        "set-cookie",
    }


def test_a_redactor_with_nothing_to_find_is_false() -> None:
    assert not Redactor({})
    assert not Redactor({"SHORT": "abc12"})
    assert Redactor({"SIX": "abc123"})
