"""The screenshots of an ACP run in `screenshots/` (acp-*.svg and .png), taken of the real
Claude Code adapter against the scripted Anthropic server, its model behind `--proxy`:

    python -m tests.acp.screenshots [OUT_DIR]     # default: screenshots/

acp-permission: the dialog on a command the agent asks about (Edit args off);
acp-terminal: the command's output, streamed from the workbench's terminal;
acp-diff: an edit the agent made through the workbench, shown as a diff;
acp-network: the network view (F4), the ACP prompt and the model's requests.
The PNGs are made with `rsvg-convert` when it is installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from tests.acp.anthropic_server import ScriptedAnthropic
from tests.acp.real_agents import CLAUDE_CODE_ACP, claude_env, installed
from tests.widgets.helpers import wait_for
from workbench.acp import AcpOptions, AcpRun

BASH = "mcp__acp__Bash"
SIZE = (140, 40)


async def take(out: Path) -> list[Path]:
    from workbench.widgets.acp_app import AcpApp
    from workbench.widgets.network_view import NetworkViewScreen
    from workbench.widgets.permission_modal import PermissionModal

    tmp = Path(tempfile.mkdtemp(prefix="acp-shots-"))
    workspace = tmp / "project"
    workspace.mkdir()
    notes = workspace / "notes.txt"
    notes.write_text("# notes\n- [ ] tests pass\n- [ ] ship it\n")
    command = "for i in 1 2 3; do echo test_$i ok; done; echo 3 passed"
    bash = {"command": command, "description": "Run the tests", "timeout": 60000}
    edit = {
        "file_path": str(notes),
        "old_string": "- [ ] tests pass",
        "new_string": "- [x] tests pass",
    }
    turns: list[list[dict[str, Any]]] = [
        [
            {"thinking": "Run the tests first, then tick the box."},
            {"text": "I'll run the tests first."},
            {"tool": BASH, "input": bash},
        ],
        [{"text": "All 3 pass. Marking it done."}, {"tool": "mcp__acp__Edit", "input": edit}],
        [{"text": "Done: the tests pass and notes.txt says so."}],
    ]  # fmt: skip
    shots: list[Path] = []
    with ScriptedAnthropic(turns) as server:
        run = AcpRun(
            AcpOptions(
                command=installed(CLAUDE_CODE_ACP, "claude-code-acp"),
                env=claude_env(server.url, tmp / "claude-home"),
                workspace=workspace,
                record=False,
                allow=["mcp__acp__Edit"],
                proxy=True,
            )
        )
        app = AcpApp(run)

        def shot(name: str) -> None:
            app.save_screenshot(f"{name}.svg", str(out))
            shots.append(out / f"{name}.svg")

        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.acp.ready.is_set(), timeout=120)
            app.prompt_bar.input.value = "run the tests, then mark notes.txt done"
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal), timeout=60)
            await pilot.pause(0.3)
            shot("acp-permission")
            await pilot.press("ctrl+y")
            await wait_for(pilot, lambda: app.view_state.run_state == "finished", timeout=90)
            calls = list(app.view_state.calls)
            for call_id, name in ((calls[0], "acp-terminal"), (calls[-1], "acp-diff")):
                app.select_call(call_id)
                await pilot.pause(0.3)
                below = app.inspector._anchors.get("Result", 0)  # under the stages
                app.inspector.scroll_to(y=below, animate=False, immediate=True)
                await pilot.pause(0.3)
                shot(name)
            await pilot.press("f4")
            await wait_for(pilot, lambda: isinstance(app.screen, NetworkViewScreen))
            await pilot.press("down")
            await pilot.pause(0.3)
            shot("acp-network")
            await pilot.press("escape")
    return shots


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    shots = anyio.run(take, out)
    converter = shutil.which("rsvg-convert")
    for svg in shots:
        if converter is not None:
            subprocess.run([converter, str(svg), "-o", str(svg.with_suffix(".png"))], check=True)
        print(svg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
