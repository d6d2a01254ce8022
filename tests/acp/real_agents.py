"""Real ACP agents for the tests, installed with npm on first use into the same cache
as the proxy's real clients (`tests/support/clients.py`: `$WORKBENCH_TEST_CLIENTS`).
A machine without npm, or an install that fails, fails the test that needs it with the
reason: it is never skipped silently.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.clients import npm_client

CLAUDE_CODE_ACP = "@zed-industries/claude-code-acp@0.16.2"
CODEX_ACP = "@zed-industries/codex-acp@0.16.0"
GEMINI_CLI = "@google/gemini-cli@0.61.0"
GEMINI_MODEL = "gemini-2.5-flash"
"""Named on the command line: with its default ("auto") Gemini CLI asks a router model
first, a request the scripted server does not script."""


def installed(package: str, bin_name: str) -> list[str]:
    """The command that starts `bin_name` of `package` ("NAME@VERSION"), installed into
    the test clients' cache on first use (`tests/support/clients.py`)."""
    name, version = package.rsplit("@", 1)
    return [str(npm_client(name, version, bin_name, probe=False))]


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
