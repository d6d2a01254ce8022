"""OAuth 2.1 for HTTP servers: against a local server that is its own authorization
server (`servers/oauth_server.py`), the workbench discovers it from the 401, registers,
shows the authorization URL, takes the redirect on its loopback listener and calls the
tools; the token is kept in a 0600 file, never in the session. The test plays the
person: it fetches the authorization URL itself (no browser)."""

from __future__ import annotations

import json
import math
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.auth import OAuthFlowError

from tests.mcp.helpers import SERVERS, calls
from tests.support.notifications import notifications
from workbench.mcp.config import McpServerConfig
from workbench.mcp.oauth import RedirectListener
from workbench.mcp.oauth_tokens import TokenFile, tokens_dir
from workbench.providers.scripted import Scenario
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions import read_session


@pytest.fixture(autouse=True)
def _private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def guarded() -> Iterator[str]:
    """The OAuth-guarded server on a free loopback port; yields its MCP URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "oauth_server.py"), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(1200):  # up to 60 s for the server to listen (a busy machine)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail("the OAuth server exited at start")
                time.sleep(0.05)
        else:
            pytest.fail("the OAuth server did not listen within 60 s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def open_as_a_person(url: str) -> httpx2.Response:
    """What a browser does with the authorization URL: the authorization server grants
    and redirects to the workbench's loopback listener, which answers the page."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as browser:
        return await browser.get(url)


async def record_run(tmp_path: Path, url: str, asked: list[str]) -> Path:
    """Record a run calling the guarded server's tools; each authorization URL shown is
    appended to `asked` and opened as a person would."""
    scenario = Scenario.model_validate(
        {
            "name": "oauth",
            "turns": [calls(("guarded__whoami", {}), ("guarded__token_hint", {})), {"text": "ok"}],
        }
    )
    path = tmp_path / f"run{len(list(tmp_path.glob('run*.jsonl')))}.jsonl"
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path / "ws",
            tools=[],
            approve="all",
            mcp_servers=[McpServerConfig(name="guarded", url=url)],
            session=path,
            pace=math.inf,
        )
    )
    hub = runtime.mcp
    assert hub is not None
    pages: list[httpx2.Response] = []
    async with anyio.create_task_group() as tg:

        async def person(url: str) -> None:
            pages.append(await open_as_a_person(url))

        def authorize(_connection: Any, url: str | None) -> None:
            if url is not None:  # (None: the person is back)
                asked.append(url)
                tg.start_soon(person, url)

        hub.on_authorize = authorize
        with anyio.fail_after(60):
            async with hub.attach(runtime.agent):
                assert hub.report()[0].startswith("MCP server guarded: 2 tools")
                await runtime.agent.prompt("go")
    for page in pages:
        assert page.status_code == 200 and "You can close this tab" in page.text
        assert str(page.url).startswith("http://127.0.0.1:")  # the loopback listener
    return path


def results(path: Path) -> dict[str, str]:
    """Each tool's result text in the recorded session."""
    events = read_session(path).events
    return {e.tool_name: e.result.content[0].text for e in events if e.type == "tool_execution_end"}


async def test_a_401_is_authorized_once_and_the_token_stays_out_of_the_session(
    tmp_path: Path, guarded: str
) -> None:
    asked: list[str] = []
    session = await record_run(tmp_path, guarded, asked)
    assert len(asked) == 1
    assert "code_challenge_method=S256" in asked[0] and "code_challenge=" in asked[0]
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in asked[0]
    store = TokenFile(guarded)
    assert store.path.parent == tokens_dir() == tmp_path / "state/agent-workbench/mcp-tokens"
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    kept = json.loads(store.path.read_text())
    token, refresh = kept["tokens"]["access_token"], kept["tokens"]["refresh_token"]
    found = results(session)
    assert found["guarded__whoami"] == f"client {kept['client_info']['client_id']}"
    assert found["guarded__token_hint"] == token[-4:]  # the call carried the kept token
    recorded = session.read_text()
    assert token not in recorded and refresh not in recorded

    # the next run uses the kept token: nobody is asked again
    again = await record_run(tmp_path, guarded, asked)
    assert len(asked) == 1
    assert results(again)["guarded__token_hint"] == token[-4:]


async def test_a_stale_token_file_is_authorized_again(tmp_path: Path, guarded: str) -> None:
    store = TokenFile(guarded)
    store.directory.mkdir(parents=True)
    store.path.write_text(
        json.dumps(
            {"server_url": guarded, "tokens": {"access_token": "revoked", "token_type": "Bearer"}}
        )
    )
    asked: list[str] = []
    session = await record_run(tmp_path, guarded, asked)
    assert len(asked) == 1
    assert results(session)["guarded__whoami"].startswith("client ")


def test_headless_prints_the_url_and_goes_on_once_authorized(tmp_path: Path, guarded: str) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps({"name": "oauth", "turns": [calls(("guarded__whoami", {})), {"text": "ok"}]})
    )
    config = tmp_path / "config.toml"
    config.write_text(f'[mcp.servers.guarded]\nurl = "{guarded}"\n')
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.update(WORKBENCH_SESSIONS_DIR=str(tmp_path / "sessions"), WORKBENCH_CONFIG=str(config))
    command = [sys.executable, "-m", "workbench", "--headless", "go", "--approve", "all"]
    process = subprocess.Popen(
        [*command, "--scenario", str(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert process.stderr is not None
        said = ""
        for line in process.stderr:
            said += line
            if "needs authorization" in line:
                break
        marker = "open this URL in a browser: "
        assert marker in said, said
        url = said.split(marker, 1)[1].split()[0]
        page = anyio.run(open_as_a_person, url)
        assert page.status_code == 200
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, said + err
    assert "MCP server guarded: 2 tools" in err
    (session,) = (tmp_path / "sessions").rglob("*.jsonl")
    token = json.loads(TokenFile(guarded).path.read_text())["tokens"]["access_token"]
    assert results(session)["guarded__whoami"].startswith("client ")
    assert token not in session.read_text() and token not in out + err


async def test_without_oauth_a_401_fails_the_start_and_says_so(guarded: str) -> None:
    from workbench.mcp.hub import McpHub

    hub = McpHub([McpServerConfig(name="guarded", url=guarded, oauth=False)])
    asked: list[Any] = []
    hub.on_authorize = lambda c, url: asked.append(url)
    with anyio.fail_after(30):
        await hub.start()
        await hub.aclose()
    assert asked == []
    (line,) = hub.report()
    assert line.startswith(f"MCP server guarded failed to start: {guarded} answered HTTP 401")
    assert "the server wants credentials" in line


async def test_the_listener_takes_only_its_own_redirect() -> None:
    listener = RedirectListener()
    base = listener.redirect_uri
    got: list[Any] = []

    async def wait() -> None:
        try:
            got.append(await listener.wait("s1"))
        except OAuthFlowError as exc:
            got.append(exc)

    async with anyio.create_task_group() as tg, httpx2.AsyncClient(timeout=10) as browser:
        tg.start_soon(wait)
        for _ in range(200):  # the listener listens once `wait` has run
            try:
                other = await browser.get(f"{base}?state=s0&code=stolen")
                break
            except httpx2.ConnectError:
                await anyio.sleep(0.01)
        assert other.status_code == 400
        assert (await browser.get(base.replace("/callback", "/favicon.ico"))).status_code == 404
        refused = await browser.get(f"{base}?state=s1&error=access_denied&error_description=no")
        assert refused.status_code == 200 and "refused" in refused.text
    listener.close()
    assert [str(g) for g in got] == ["the authorization server refused: no"]


async def test_the_app_shows_the_address_and_closes_it_once_authorized(
    tmp_path: Path, guarded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.widgets.app import make_app
    from workbench.widgets.mcp_authorize import McpAuthorizeModal, openable

    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    scenario = Scenario.model_validate(
        {"name": "oauth", "turns": [calls(("guarded__whoami", {})), {"text": "ok"}]}
    )
    runtime = build_runtime(
        RunOptions(
            scenario=scenario,
            workspace=tmp_path,
            tools=[],
            allow=["mcp:guarded"],
            mcp_servers=[McpServerConfig(name="guarded", url=guarded)],
        )
    )
    app = make_app(runtime, subtitle="test")
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(140, 44)) as pilot:
        with anyio.fail_after(30):
            while not isinstance(app.screen, McpAuthorizeModal):
                await pilot.pause(0.05)
        await pilot.pause()
        modal = app.screen
        assert modal.server == "guarded" and modal.url.startswith(f"{guarded[:-4]}/authorize?")
        assert runtime.mcp is not None
        assert runtime.mcp.connections[0].authorize_url == modal.url
        await pilot.click("#copy")
        assert copied == [modal.url]
        await pilot.click("#open")
        with anyio.fail_after(10):
            while opened != [modal.url]:
                await pilot.pause(0.05)
        page = await open_as_a_person(modal.url)
        assert page.status_code == 200
        with anyio.fail_after(30):
            while app.screen is modal or runtime.mcp.connections[0].status != "ready":
                await pilot.pause(0.05)
        assert runtime.mcp.connections[0].authorize_url is None
        assert any(n.message == "MCP server guarded: authorized" for n in notifications(app))
        app.prompt_bar.input.value = "go"
        await pilot.press("enter")
        with anyio.fail_after(30):
            while app.view_state.run_state != "finished":
                await pilot.pause(0.05)
    assert runtime.agent.state.messages[-2].text.startswith("client ")
    assert not openable("file:///etc/passwd") and not openable("javascript:alert(1)")


async def test_the_address_dialog_closes_and_opens_only_web_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from textual.app import App
    from textual.widgets import Static

    from workbench.widgets.mcp_authorize import McpAuthorizeModal

    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    modal = McpAuthorizeModal("evil", "javascript:alert(1)")

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(modal)

    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.click("#open")
        await pilot.pause()
        said = str(modal.query_one("#authorize-said", Static).render())
        assert said.startswith("Not a web address") and opened == []
        await pilot.click("#dismiss")
        await pilot.pause()
        assert app.screen is not modal
