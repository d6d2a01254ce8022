"""MCP lives outside the runtime: `workbench.agent` never loads the SDK (nor jsonschema
until a JSON-Schema tool is validated), a runtime without MCP servers never loads it,
and `workbench.mcp` loads no UI."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded(code: str, roots: tuple[str, ...]) -> list[str]:
    found = f"{{m.split('.')[0] for m in sys.modules}} & {set(roots)!r}"
    probe = f"{code}; import sys; print(sorted({found}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return eval(out.stdout.strip())  # noqa: S307 - our own probe's output


@pytest.mark.parametrize(
    "code",
    [
        "import workbench.agent",
        "from workbench.agent import AgentTool, run_agent_loop",
        "import pathlib, tempfile; from workbench.providers.scripted import Scenario; "
        "from workbench.runtime import RunOptions, build_runtime; "
        "build_runtime(RunOptions(scenario=Scenario(name='s', turns=[]), "
        "workspace=pathlib.Path(tempfile.mkdtemp())))",
        "import workbench.mcp.config",
    ],
)
def test_no_sdk_no_ui_and_no_jsonschema_until_needed(code: str) -> None:
    assert _loaded(code, ("mcp", "mcp_types", "jsonschema", "textual", "rich")) == []


def test_the_mcp_package_loads_no_ui() -> None:
    loaded = _loaded("import workbench.mcp.hub, workbench.mcp.tools", ("textual", "rich", "mcp"))
    assert loaded == ["mcp"]
