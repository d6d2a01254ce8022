"""`workbench proxy` from the command line: headless, until Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from tests.proxy.helpers import AGENT_KEY, UPSTREAM_KEY, text_reply, tool_loop, tool_reply
from workbench.sessions.reader import read_session
from workbench.view.fold import fold

ROOT = Path(__file__).resolve().parents[2]


def start(args: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "UPSTREAM_KEY": UPSTREAM_KEY, "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "proxy", *args, "--session-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )


async def test_headless_proxy_prints_records_and_stops_on_ctrl_c(chat_server, tmp_path):
    chat_server.script(tool_reply("call_h1", "a.txt"), text_reply("alpha."))
    proc = start(
        [
            "--upstream",
            chat_server.url,
            "--port",
            "0",
            "--headless",
            "--api-key-env",
            "UPSTREAM_KEY",
        ],
        tmp_path,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = re.search(r"listening on (\S+),", first)
        assert url, first + proc.stderr.read() if proc.poll() is not None else first
        client = openai.AsyncOpenAI(base_url=url.group(1), api_key=AGENT_KEY, max_retries=0)
        text, _ = await tool_loop(client, "read a.txt", stream=True)
        await client.close()
        assert text == "alpha."
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "read_file" in out and "call_h1" in out and "[1] " in out
    (path,) = tmp_path.glob("*.jsonl")
    assert f"conversation 1 recorded to {path}" in out.replace("\n", "")
    state = fold(read_session(path).events)
    assert state.calls["call_h1"].status == "done"
    assert chat_server.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"


def test_a_host_beyond_loopback_is_warned_about(tmp_path):
    proc = start(["--upstream", "ftp://nowhere", "--host", "0.0.0.0", "--headless"], tmp_path)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "WARNING: listening on 0.0.0.0, not only this machine" in err
    assert "is not an http(s) URL" in err


def test_loopback_hosts_are_not_warned_about():
    from workbench.proxy.guard import is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.5", "::", "example.com"))


def test_an_upstream_url_with_a_password_is_refused():
    import pytest

    from workbench.proxy import Proxy, ProxyOptions

    with pytest.raises(ValueError, match="holds a password"):
        Proxy(ProxyOptions(upstream="https://user:sk-secret@example.com/v1"))


CLIENT = """
import asyncio, os, sys
import openai
from tests.proxy.helpers import tool_loop

async def main():
    client = openai.AsyncOpenAI(max_retries=0)  # its endpoint and key from the environment
    text, _ = await tool_loop(client, "read a.txt", stream=True)
    await client.close()
    env = os.environ
    print("CLIENT:", text, env["ANTHROPIC_BASE_URL"], env["OPENAI_API_KEY"], flush=True)
    sys.exit(3)

asyncio.run(main())
"""


def test_the_launcher_runs_the_client_through_the_proxy_and_stops_with_it(chat_server, tmp_path):
    chat_server.script(tool_reply("call_l1", "a.txt"), text_reply("alpha."))
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    args = [
        "--upstream",
        chat_server.url,
        "--port",
        "0",
        "--headless",
        "--api-key-env",
        "UPSTREAM_KEY",
    ]
    own = [*args, "--session-dir", str(tmp_path)]  # `start` adds its own after the command
    proc = start([*own, "--", sys.executable, str(script)], tmp_path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err  # the client's own exit status
    line = next(x for x in out.splitlines() if x.startswith("CLIENT:"))
    _, text, anthropic_url, key = line.split(" ")
    assert text == "alpha." and anthropic_url.startswith("http://127.0.0.1:")
    assert key == "workbench-proxy"  # a stand-in: the upstream's key goes in its place
    assert chat_server.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    paths = list(tmp_path.glob("*.jsonl"))
    assert len(paths) == 1, out + err
    assert fold(read_session(paths[0]).events).calls["call_l1"].status == "done"


def test_the_token_is_read_where_the_workbench_keeps_its_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At start-up the workbench moves secret-named variables (`*_TOKEN`) out of its
    environment; `--token-env` still finds the token there."""
    import workbench.proxy
    from workbench import secret_env
    from workbench.cli.proxy import proxy_main

    seen: list[object] = []

    def stop(options: object) -> object:
        seen.append(options)
        raise ValueError("stopped by the test")

    monkeypatch.setenv("MY_PROXY_TOKEN", "t0ken-for-the-test")
    monkeypatch.setattr(secret_env, "_held", {})
    secret_env.hold_environment(environ=os.environ)
    assert "MY_PROXY_TOKEN" not in os.environ
    monkeypatch.setattr(workbench.proxy, "Proxy", stop)
    argv = ["--upstream", "http://127.0.0.1:9/v1", "--headless", "--no-record"]
    assert proxy_main([*argv, "--token-env", "MY_PROXY_TOKEN"]) == 2
    assert [getattr(o, "token", None) for o in seen] == ["t0ken-for-the-test"]
