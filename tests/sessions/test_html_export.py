"""`workbench export FILE --format html`: one self-contained page, every untrusted text
escaped, rendered by a real headless Chromium (skipped, saying so, without one)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.sessions.helpers import write_session
from tests.sessions.person_runs import MIXED, answers_for_mixed, record_with_person
from workbench.__main__ import main

HOSTILE = (
    '</pre><script>alert(1)</script><img src="http://127.0.0.1:9/x.png" onerror="alert(2)">'
    "\x1b[31mred\x1b[0m \u202eevil"
)


@pytest.fixture
def mixed_page(tmp_path: Path) -> tuple[Path, Path]:
    """(a session a person answered, recorded with its simulated network view; its page)."""
    runtime = anyio.run(
        lambda: record_with_person(
            tmp_path / "ws", MIXED, answers_for_mixed, second_prompt="again", simulated_wire=True
        )
    )
    page = tmp_path / "run.html"
    assert main(["export", str(runtime.session_path), "--format", "html", "-o", str(page)]) == 0
    return runtime.session_path, page


def test_the_page_shows_calls_stages_decisions_results_and_the_network(
    mixed_page: tuple[Path, Path],
) -> None:
    _session, page = mixed_page
    text = page.read_text(encoding="utf-8")
    assert text.count('<details class="call"') == 5
    assert "denied by the user" in text and "Permission denied by the user: not today" in text
    assert "edited by a person" in text and "edited by a person\\n" in text
    assert "allowed by rule read_file (default)" in text
    assert re.search(r"<dt>parsed = prepared</dt>", text)
    assert "<h2>Network</h2>" in text and "simulated: nothing was sent" in text
    assert "cost" in text and "<h2>Timeline</h2>" in text


def test_untrusted_text_is_escaped_and_nothing_is_loaded(tmp_path: Path) -> None:
    session = write_session(tmp_path / "s.jsonl", HOSTILE, result=HOSTILE, tool=HOSTILE[:20])
    page = tmp_path / "s.html"
    assert main(["export", str(session), "--format", "html", "-o", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.count("<script") == 1  # the page's own, at the end
    assert "<img" not in text and "onerror=" not in text.replace("onerror=&quot;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "\x1b" not in text and "\u202e" not in text and "␛[31m" in text
    links = re.findall(r"""<[a-z][^>]*\s(?:src|href)\s*=\s*["']?(.)""", text)
    assert links == ["#"]  # the timeline's one link to the call, in the page
    assert "default-src 'none'" in text


@pytest.mark.parametrize("command", ["export --format html", "export --format md", "diff"])
def test_piped_to_a_reader_that_stops_early_it_ends_quietly(tmp_path: Path, command: str) -> None:
    """Output far past a pipe's buffer, read by `head`: no traceback."""
    import sys

    big = "\n".join(f"line {n}" for n in range(40_000))
    first = write_session(tmp_path / "a.jsonl", result=big)
    second = write_session(tmp_path / "b.jsonl", result=big.replace("line", "LINE"))
    files = f"{first} {second}" if command == "diff" else str(first)
    done = subprocess.run(
        f"{sys.executable} -m workbench {command} {files} | head -c 100",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert len(done.stdout) == 100
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
OWN_TRAFFIC = re.compile(r"^https?://([a-z0-9-]+\.)*(google|googleapis|gvt1|gstatic)\.com/")
"""Chromium's own background requests (updates, accounts), made whatever page it opens."""


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install chromium): the page is not rendered",
)
def test_chromium_renders_the_page_with_no_console_message_and_no_request(
    mixed_page: tuple[Path, Path], tmp_path: Path
) -> None:
    assert CHROMIUM is not None
    _session, page = mixed_page
    net_log = tmp_path / "net.json"
    done = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            f"--log-net-log={net_log}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = done.stdout
    assert 'data-ready="5"' in dom  # the script ran and found every call
    assert dom.count('<details class="call"') == 5 and "run_command" in dom
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # no error, no warning, no refused load
    events = json.loads(net_log.read_text(encoding="utf-8"))["events"]
    urls = {e["params"]["url"] for e in events if "url" in e.get("params", {})}
    asked = {u for u in urls if u != page.as_uri() and not OWN_TRAFFIC.match(u)}
    assert asked == set()
