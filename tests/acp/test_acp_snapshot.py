"""How an ACP run looks at 160x48 (pytest-textual-snapshot; review any update by eye).

The scripted fake agent thinks, plans, runs a command through a workbench terminal and
edits a file (a diff), with the clock frozen so no duration varies; the workspace has a
fixed path, since the session notice and the title show it. The edit's call is selected.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from tests.acp.helpers import Fake, ask_call
from tests.widgets.helpers import send, wait_for
from workbench.agent import clock
from workbench.widgets.acp_app import AcpApp

WORKSPACE = Path(tempfile.gettempdir()) / "workbench-acp-snapshot"

SCRIPT = [
    [
        {"think": "Tests first, then the status line."},
        {
            "plan": [
                {"content": "run the tests", "status": "in_progress", "priority": "high"},
                {"content": "mark notes.txt done", "status": "pending"},
            ]
        },
        {"say": "I'll run the tests first."},
        *ask_call("c1", "printf 'test_1 ok\\ntest_2 ok\\n2 passed\\n'")[:3],
        {"terminal": "printf 'test_1 ok\\ntest_2 ok\\n2 passed\\n'", "call": "c1"},
        {
            "call": {
                "toolCallId": "e1",
                "title": "Edit notes.txt",
                "kind": "edit",
                "status": "pending",
                "rawInput": {"path": "notes.txt", "old": "status: draft", "new": "status: done"},
                "locations": [{"path": "notes.txt", "line": 2}],
            }
        },
        {"ask": "e1"},
        {
            "update": {
                "toolCallId": "e1",
                "status": "completed",
                "content": [
                    {
                        "type": "diff",
                        "path": "notes.txt",
                        "oldText": "# Notes\nstatus: draft\nowner: sam\n",
                        "newText": "# Notes\nstatus: done\nowner: sam\n",
                    }
                ],
            }
        },
        {"say": "Done: 2 tests pass and notes.txt says done."},
    ]
]


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    clock.set_clock(lambda: 1_790_000_000_000.0)
    yield
    clock.set_clock(None)


def test_an_acp_run(snap_compare: Any, tmp_path: Path) -> None:
    shutil.rmtree(WORKSPACE, ignore_errors=True)
    fake = Fake(tmp_path, SCRIPT)
    fake.workspace = WORKSPACE
    WORKSPACE.mkdir()
    app = AcpApp(fake.run(allow=["Bash", "edit"], approve="rules"))

    async def run_before(pilot: Any) -> None:
        for box in pilot.app.query(Input):
            box.cursor_blink = False
        await wait_for(pilot, lambda: app.acp.ready.is_set())
        await send(pilot, app, lambda: app.view_state.run_state == "finished", text="run the tests")
        app.select_call("e1")
        await wait_for(
            pilot, lambda: app.inspector.record is not None and app.inspector.record.id == "e1"
        )

    try:
        assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)
    finally:
        shutil.rmtree(WORKSPACE, ignore_errors=True)
