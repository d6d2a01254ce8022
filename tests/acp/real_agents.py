"""Real ACP agents for the tests, installed with npm into a cache directory on first use.

`installed(package, bin)` runs `npm install` once per machine (the cache directory
is `$WORKBENCH_ACP_AGENTS`, default a directory under the system's temp dir) and
returns the agent's command. A machine without npm, or an install that fails, fails
the test that needs it with the reason: it is never skipped silently.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CLAUDE_CODE_ACP = "@zed-industries/claude-code-acp@0.16.2"
CODEX_ACP = "@zed-industries/codex-acp@0.16.0"
GEMINI_CLI = "@google/gemini-cli@0.61.0"
GEMINI_MODEL = "gemini-2.5-flash"
"""Named on the command line: with its default ("auto") Gemini CLI asks a router model
first, a request the scripted server does not script."""
INSTALL_TIMEOUT = 600


def cache_dir() -> Path:
    root = os.environ.get("WORKBENCH_ACP_AGENTS")
    return Path(root) if root else Path(tempfile.gettempdir()) / "workbench-acp-agents"


def installed(package: str, bin_name: str) -> list[str]:
    """The command that starts `bin_name` of `package` (installed if it is not yet)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm is needed to install the ACP agent {package} (not on PATH)")
    directory = cache_dir() / package.replace("/", "+")
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / "node_modules" / ".bin" / bin_name
    with open(directory / ".lock", "w") as lock:  # xdist workers install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            (directory / "package.json").write_text(json.dumps({"private": True}))
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(directory), package],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
            if done.returncode != 0 or not binary.exists():
                pytest.fail(
                    f"npm install {package} failed (exit {done.returncode}):\n{done.stderr[-2000:]}"
                )
    return [str(binary)]


def claude_env(base_url: str, home: Path) -> dict[str, str]:
    """Claude Code's adapter pointed at a scripted server, with nothing else reached."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "IS_SANDBOX": "1",  # as root, Claude Code refuses to skip permissions otherwise
        "CLAUDE_CONFIG_DIR": str(home),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def gemini_env(base_url: str, home: Path) -> dict[str, str]:
    """Gemini CLI pointed at a scripted server, its settings (API-key auth, no usage
    statistics) in a home of its own."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": False},
            }
        )
    )
    return {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": base_url, "HOME": str(home)}
